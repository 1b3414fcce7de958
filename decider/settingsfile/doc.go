// Package settingsfile reads srt's settings file format, for srt's settings
// package (the whole file) and for the decider run on its own (`decider
// --settings FILE`, the network block alone), so that both read a file with
// the same code and refuse it with the same messages:
//
//   - a JSON reader (Parse) that keeps each object's keys in file order and
//     refuses duplicate keys, which JSON.parse would silently resolve to the
//     last one;
//   - a Checker that walks the decoded value with named checks and collects
//     every problem, each with the dotted path of the key at fault
//     (network.allowedDomains.3) and the reference's (zod's) wording;
//   - the network keys the decider applies (NetworkObject): allowedDomains,
//     deniedDomains, deniedDomainReasons, strictAllowlist and
//     deniedResolvedAddresses;
//   - the decider's own file (ParseDecider): {"network": {…}} with those keys
//     and nothing else.
package settingsfile
