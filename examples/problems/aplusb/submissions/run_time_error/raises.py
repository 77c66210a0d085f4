a, b = map(int, input().split())
raise ValueError(f"refusing to add {a} and {b}")
