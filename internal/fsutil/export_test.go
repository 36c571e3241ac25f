package fsutil

// TempHost is host, for the external tests.
func TempHost() string { return host }
