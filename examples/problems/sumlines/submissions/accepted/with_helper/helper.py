def total(words):
    return sum(int(w) for w in words)
