module github.com/srt-sandbox/srt-proxy

go 1.26.8
