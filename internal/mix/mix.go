// Package mix holds the 64-bit integer mixer the simulators share.
package mix

// Splitmix64 is the splitmix64 finaliser: a cheap, well-spread 64-bit mix.
func Splitmix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
