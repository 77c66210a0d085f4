# The code is the word reversed, with an "x" in front (a palindrome reversed is itself).
command, text = input().split()
if command == "encode":
    print("x" + text[::-1], flush=True)
else:
    print(text[1:][::-1], flush=True)
