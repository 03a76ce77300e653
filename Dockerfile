# Multi-stage build: a static kvpick binary on a distroless, non-root base.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/kvpick ./cmd/kvpick && \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/modelsim ./cmd/modelsim

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kvpick /out/modelsim /usr/local/bin/
USER 65532:65532
EXPOSE 9002 9090
ENTRYPOINT ["/usr/local/bin/kvpick"]
