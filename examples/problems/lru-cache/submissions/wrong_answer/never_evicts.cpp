class LRUCache {
    unordered_map<int, int> values;

public:
    LRUCache(int capacity) {}

    int get(int key) {
        auto it = values.find(key);
        return it == values.end() ? -1 : it->second;
    }

    void put(int key, int value) { values[key] = value; }
};
