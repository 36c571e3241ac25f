package fsutil

// TempHost is host, for the external tests.
func TempHost() string { return host }

// Resweep forgets that dir was swept, so a test can sweep it again.
func Resweep() { cleaned.Clear() }

// TempNameFor is tempName, for the external tests.
func TempNameFor(base string) string { return tempName(base) }
