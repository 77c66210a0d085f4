class LRUCache {
    constructor(capacity) { this.capacity = capacity; this.cache = new Map(); }
    get(key) { return this.cache.has(key) ? key : -1; }
    put(key, value) {
        this.cache.delete(key);
        this.cache.set(key, value);
        if (this.cache.size > this.capacity) this.cache.delete(this.cache.keys().next().value);
    }
}
