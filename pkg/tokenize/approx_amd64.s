//go:build !purego

#include "textflag.h"

// 16 copies of a byte.
#define BYTES16(name, b) \
	DATA name<>+0(SB)/8, $b; \
	DATA name<>+8(SB)/8, $b; \
	GLOBL name<>(SB), RODATA|NOPTR, $16

BYTES16(c20, 0x2020202020202020)
BYTES16(c1f, 0x1f1f1f1f1f1f1f1f)
BYTES16(c9a, 0x9a9a9a9a9a9a9a9a)
BYTES16(c50, 0x5050505050505050)
BYTES16(c8a, 0x8a8a8a8a8a8a8a8a)
BYTES16(c5f, 0x5f5f5f5f5f5f5f5f)
BYTES16(c77, 0x7777777777777777)
BYTES16(c85, 0x8585858585858585)

// CHUNK classifies the 16 bytes at off(SI) into bits shift..shift+15 of R8
// (word), R9 (whitespace) and R10 (' '). A range test adds the offset that
// moves the range's low end to -128 and compares signed against its high end
// (PCMPGTB a, b sets b's lanes where b > a). In order: letters (either case),
// digits, '_', or-ed with the bytes >= 0x80 for words; ' '; '\t'..'\r' or-ed
// with ' ' for whitespace.
#define CHUNK(off, shift) \
	MOVOU off(SI), X0; \
	MOVO X0, X1; POR X8, X1; PADDB X9, X1; MOVO X10, X2; PCMPGTB X1, X2; \
	MOVO X0, X3; PADDB X11, X3; MOVO X12, X4; PCMPGTB X3, X4; \
	MOVO X0, X5; PCMPEQB X13, X5; \
	POR X4, X2; POR X5, X2; POR X0, X2; \
	PMOVMSKB X2, AX; SHLQ $shift, AX; ORQ AX, R8; \
	MOVO X0, X6; PCMPEQB X8, X6; \
	PMOVMSKB X6, BX; SHLQ $shift, BX; ORQ BX, R10; \
	MOVO X0, X7; PADDB X14, X7; MOVO X15, X3; PCMPGTB X7, X3; \
	POR X6, X3; \
	PMOVMSKB X3, CX; SHLQ $shift, CX; ORQ CX, R9

// func classify64(p *byte) classMasks
TEXT ·classify64(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVOU c20<>(SB), X8
	MOVOU c1f<>(SB), X9
	MOVOU c9a<>(SB), X10
	MOVOU c50<>(SB), X11
	MOVOU c8a<>(SB), X12
	MOVOU c5f<>(SB), X13
	MOVOU c77<>(SB), X14
	MOVOU c85<>(SB), X15
	XORQ R8, R8
	XORQ R9, R9
	XORQ R10, R10
	CHUNK(0, 0)
	CHUNK(16, 16)
	CHUNK(32, 32)
	CHUNK(48, 48)
	MOVQ R8, ret_word+8(FP)
	MOVQ R9, ret_space+16(FP)
	MOVQ R10, ret_blank+24(FP)
	RET

// func emit64(out *uint32, text *byte, base int, st uint64, start int) int
//
// emitFastGeneric's loop with everything in registers: for each set bit p of
// st, the piece from start to base+p is loaded as 8 bytes, masked to its
// length, hashed as pieceID does, and stored; start becomes base+p. Positions
// are block-relative (start may be up to 8 bytes before the block), and the
// loop is unrolled twice so that start and p trade registers instead of
// being copied.
TEXT ·emit64(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ text+8(FP), SI
	MOVQ base+16(FP), R8
	MOVQ st+24(FP), R9
	MOVQ start+32(FP), R10
	ADDQ R8, SI                     // SI = the block
	SUBQ R8, R10                    // R10 = start - base
	MOVQ $-7046029254386353131, R11 // hashMul
	LEAQ ·pieceLen(SB), R12         // masks, then salts 128 bytes on
	TESTQ R9, R9
	JZ done

loop:
	// piece from R10 to AX
	BSFQ R9, AX
	LEAQ -1(R9), BX
	ANDQ BX, R9
	MOVQ AX, CX
	SUBQ R10, CX
	ANDQ $15, CX
	MOVQ (SI)(R10*1), DX
	ANDQ (R12)(CX*8), DX
	XORQ 128(R12)(CX*8), DX
	IMULQ R11, DX
	MOVQ DX, BX
	SHRQ $29, BX
	XORQ BX, DX
	IMULQ R11, DX
	SHRQ $47, DX
	MOVL DX, (DI)
	TESTQ R9, R9
	JZ doneAX

	// piece from AX to R10
	BSFQ R9, R10
	LEAQ -1(R9), BX
	ANDQ BX, R9
	MOVQ R10, CX
	SUBQ AX, CX
	ANDQ $15, CX
	MOVQ (SI)(AX*1), DX
	ANDQ (R12)(CX*8), DX
	XORQ 128(R12)(CX*8), DX
	IMULQ R11, DX
	MOVQ DX, BX
	SHRQ $29, BX
	XORQ BX, DX
	IMULQ R11, DX
	SHRQ $47, DX
	MOVL DX, 4(DI)
	ADDQ $8, DI
	TESTQ R9, R9
	JNZ loop

done:
	ADDQ R8, R10
	MOVQ R10, ret+40(FP)
	RET

doneAX:
	ADDQ R8, AX
	MOVQ AX, ret+40(FP)
	RET
