package hostname

// LowerASCII lower-cases the ASCII letters of s and leaves every other
// byte as it is: no Unicode case mapping, which would turn the Kelvin sign
// (U+212A) into a 'k' and let a name that is not a policy's match one.
func LowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
