// Package srtproxy is the module of srt-proxy, srt's HTTP and SOCKS5 egress
// proxy: it accepts on listening sockets it inherits and asks a decider
// process about every connection and request (docs/architecture.md).
package srtproxy
