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
//     cannot parse is compared verbatim. When two profiles still differ,
//     a rule of one pairs off with a rule of the other whose filters
//     match the same canonical paths (a subpath and its regex, two
//     spellings of one regex). ASSUMPTION: Seatbelt's regex dialect reads
//     these expressions as Go does, and matches canonical paths (no "//",
//     symlinks resolved).
//  3. Per leaf, in source order, a rule is dropped when a later rule of
//     either action matches everything it matches (it can never be the
//     last match): a later rule with a subset of its filters, or whose
//     (subpath P) contains its (subpath Q)/(literal Q). A rule is also
//     dropped when the nearest earlier rule that can match a request in
//     common with it has its action and modifiers and matches all it
//     matches (a deny inside no allow repeats deny default), and when its
//     filters can match nothing (two disjoint paths required at once).
//  4. Two adjacent rules commute (swapping them changes no decision) when
//     no request matches both, or when they have the same action and
//     modifiers. Each rule's Layer is the length of the longest chain of
//     later rules that do not commute with it, one after the other (0:
//     nothing after it can override it): the Foata normal form of the
//     rule sequence under those swaps, the same for every order the
//     swaps reach, so the order of independent rules does not count and
//     the order of overlapping deny and allow rules does. Within a layer
//     a rule covered by another with its action and modifiers is dropped.
//     Whether two rules can match a common request is decided for
//     subpath, literal and regex filters on canonical absolute paths
//     (lang.go, by regex derivatives); anything else, or a question too
//     large, counts as "they may" (the rules then keep their order).
//     Sound, not complete: equal permissions may still normalise apart,
//     never different permissions alike.
//  5. Modifiers: (with message …) on an allow is dropped (only a denial
//     reports its message); every other modifier is part of the rule.
//
// Two profiles with equal normal forms decide every (operation, path,
// name) the same way, under the two assumptions above. Equal permissions
// may still normalise differently (e.g. one subpath against two
// literals); the diff then shows both spellings.
package sbpl
