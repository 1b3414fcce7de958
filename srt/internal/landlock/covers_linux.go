package landlock

// covers names, for people, what Landlock refuses outside the write roots
// from each ABI on (the rights of writeRights and the scopes).
var covers = []struct {
	abi  int
	what string
}{
	{1, "writing, creating and removing files and directories"},
	{2, "moving or linking files between directories"},
	{3, "truncating files"},
	{5, "device ioctls"},
	{scopeABI, "connecting to abstract Unix sockets bound outside"},
}

// Covers lists what Landlock of ABI abi refuses: with writes, the write
// limit and the scopes; without, the scopes alone (Rules.ScopesOnly).
func Covers(abi int, writes bool) []string {
	var out []string
	for _, c := range covers {
		if c.abi <= abi && (writes || c.abi >= scopeABI) {
			out = append(out, c.what)
		}
	}
	return out
}
