func myPow(x float64, n int) float64 {
	return x * float64(n)
}
