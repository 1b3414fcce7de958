// Package sbpl reads Seatbelt profiles (SBPL, the Scheme-like language of
// macOS's sandbox-exec) and normalises them into rule sets that can be
// compared for the permissions they grant, not their spelling. It is the
// oracle of the differential test between srt's profile generator
// (internal/seatbelt) and the reference's; it never runs a profile.
//
// # What is read
//
// Top-level forms: (version N), (allow OP… FILTER… MODIFIER…), (deny …),
// and (import …)/(debug …)/(trace …), kept as text. Anything else
// (define, if, macros) is an error: its meaning would be guessed.
// Operations are symbols, filters lists, modifiers (with …) lists.
// Strings take TinyScheme's escapes (\" \\ \n \t \r \a \0 \xHH;); a #"…"
// literal keeps its backslashes (it is a regex's text) and is otherwise a
// string like "…". Comments are ";" to the end of the line and #| … |#.
//
// # Normal form
//
// Seatbelt decides an operation by the LAST rule that matches it (a
// later rule overrides an earlier one); a rule's filters are alternatives
// (any one matching suffices). The normal form keeps exactly that:
//
//  1. Operations are split into leaves. A wildcard (file-read*, network*,
//     default; ipc-posix-shm and ipc-posix-sem are treated as wildcards)
//     covers every operation whose name extends its family at a "-"
//     boundary (file-read* covers file-read-data, not file-readx). The
//     leaves are all operation names either compared profile writes; a
//     wildcard leaf stands for the operations beneath it that neither
//     names. ASSUMPTION: Seatbelt's operation hierarchy is the name
//     hierarchy. Rules on operations with no common leaf are independent,
//     so their relative order is ignored.
//  2. Filters go to disjunctive normal form: require-any becomes separate
//     rules, require-all a sorted set of filters, nested forms are
//     distributed (bounded: 1024 alternatives per rule). require-not is
//     kept as one opaque filter over its normalised operand. A regex's
//     text is compared in the form Go's regexp/syntax parser and
//     simplifier give it (so "\\." and #"\." and [.] are one); text Go
//     cannot parse is compared verbatim. ASSUMPTION: Seatbelt's regex
//     dialect reads these expressions as Go does.
//  3. Per leaf, in source order, a rule is dropped when a later rule of
//     either action matches everything it matches (it can never be the
//     last match): a later rule with a subset of its filters, or whose
//     (subpath P) contains its (subpath Q)/(literal Q). What remains
//     splits into runs of one action; Layer counts runs from the end (0
//     wins). Within a run, order does not matter (any match gives the
//     same action), and a rule covered by another of the run is dropped.
//     Order ACROSS runs is kept: moving a deny past an allow whose
//     filters may overlap it changes the result, and overlap between
//     regexes and paths is not decided here, so two profiles that differ
//     only by such a move compare as different (sound, not complete).
//  4. Modifiers: (with message …) on an allow is dropped (only a denial
//     reports its message); every other modifier is part of the rule.
//
// Two profiles with equal normal forms decide every (operation, path,
// name) the same way, under the two assumptions above. Equal permissions
// may still normalise differently (e.g. one subpath against two
// literals); the diff then shows both spellings.
package sbpl
