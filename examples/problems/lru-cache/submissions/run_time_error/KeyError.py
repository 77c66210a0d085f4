class LRUCache:

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.values = {}

    def get(self, key: int) -> int:
        value = self.values.pop(key)  # KeyError for a key that is not there
        self.values[key] = value
        return value

    def put(self, key: int, value: int) -> None:
        self.values.pop(key, None)
        self.values[key] = value
        if len(self.values) > self.capacity:
            del self.values[next(iter(self.values))]
