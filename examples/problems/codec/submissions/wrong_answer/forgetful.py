# Encodes well, but cannot decode: it has no memory of the first pass.
command, text = input().split()
print("x" + text[::-1] if command == "encode" else "word", flush=True)
