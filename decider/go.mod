module github.com/srt-sandbox/decider

go 1.26.8
