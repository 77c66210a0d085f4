import strutils

let parts = stdin.readLine().splitWhitespace()
echo parseBiggestInt(parts[0]) + parseBiggestInt(parts[1])
