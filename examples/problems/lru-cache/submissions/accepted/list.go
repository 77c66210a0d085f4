import "container/list"

type entry struct{ key, value int }

type LRUCache struct {
	capacity int
	order    *list.List
	where    map[int]*list.Element
}

func Constructor(capacity int) LRUCache {
	return LRUCache{capacity, list.New(), map[int]*list.Element{}}
}

func (c *LRUCache) Get(key int) int {
	e, ok := c.where[key]
	if !ok {
		return -1
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry).value
}

func (c *LRUCache) Put(key int, value int) {
	if e, ok := c.where[key]; ok {
		e.Value.(*entry).value = value
		c.order.MoveToFront(e)
		return
	}
	c.where[key] = c.order.PushFront(&entry{key, value})
	if c.order.Len() > c.capacity {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.where, oldest.Value.(*entry).key)
	}
}
