// Package sandbox runs commands under srt's sandbox. It is the whole of
// srt's behaviour; the srt command-line tool is a thin layer over it.
//
// A Manager holds a validated configuration (see package settings) and
// wraps commands: Command returns a Cmd whose embedded *exec.Cmd starts
// bubblewrap with the command's plan. After the command has finished, call
// Release to remove what srt created on the host for it.
//
// The sandbox's first process is an init stage that is this very program,
// started again from a descriptor of its executable. Importing this package
// installs the hook that makes the program act as the init stage when it is
// started that way (see initstage). A host program whose start-up is slow,
// or that cannot be re-executed, can name another binary that links this
// package (the srt tool does) in Options.InitExecutable.
package sandbox
