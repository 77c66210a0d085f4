print("guess 500", flush=True)
