// Package glob matches and expands the git-style path patterns that the
// filesystem settings (denyRead, allowRead, denyWrite) accept.
//
// Patterns and paths are absolute and clean, and matching is case-sensitive
// and segment-wise:
//
//   - `*` matches any run of characters within one segment (never `/`);
//     `?` matches exactly one character (never `/`). There is no special rule
//     for a leading dot: `*` matches `.env`.
//   - A segment made only of stars, two or more (`**`), matches zero or more
//     whole segments, so `/a/**/b` matches `/a/b` and `/a/x/y/b`. As the last
//     segment it matches one or more, so `/a/**` matches everything beneath
//     `/a` but not `/a` itself, as in git. Stars inside a segment (`a**b`)
//     behave like a single `*`.
//   - `[set]`, `[a-z]`, `[!x]` and `[^x]` match one character of (or not of)
//     the set. A set ends at the first `]` after the `[` (and after an
//     optional `!` or `^`); `-` first or last is literal. A `[` that forms no
//     valid set — unterminated (`list[`), empty (`list[].ts`, `[!]`) or
//     holding a reversed range (`[user-id]`, since r > i) — is a literal
//     character, and so is the `]` that would have closed it. Sets never span
//     a `/`, and POSIX classes such as `[:alpha:]` are not supported.
//   - Backslash is an ordinary character: paths may contain it and no
//     pattern character can be escaped. A path containing a literal `*`, `?`
//     or valid set is named through the settings' `literal` form instead.
//   - A character is a UTF-8 sequence; a byte that is not valid UTF-8 counts
//     as one character of its own.
//
// CompileWithLiteralPrefix compiles a pattern beneath a directory whose
// name is taken literally, whatever characters it holds: the working
// directory or home an entry is written in is a name, not a pattern.
//
// Expand lists the existing paths a pattern names, walking only into
// directories that can still lead to a match. Symlinks beneath the pattern's
// literal Prefix are not followed unless asked; symlinks within the Prefix
// are followed, as the kernel follows them when the Prefix is listed. When
// following, a symlink that leads to "/" or to a directory at or above its
// own is reported (Expansion.Loops), not walked: it would walk that tree
// again from its top.
package glob
