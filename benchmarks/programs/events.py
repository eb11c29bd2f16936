"""A priority-queue simulation: a bank with tellers, customers arriving and leaving,
events on a heap, a seeded random source. Prints waiting-time statistics."""
import heapq


class Random:
    def __init__(self, seed):
        self.state = seed

    def next(self):
        self.state = (self.state * 25214903917 + 11) % 2**48
        return self.state / 2**48

    def exponential(self, mean):
        u = self.next()
        return -mean * __import__("math").log(1.0 - u)


class Customer:
    __slots__ = ("cid", "arrived", "needs", "started")

    def __init__(self, cid, arrived, needs):
        self.cid, self.arrived, self.needs, self.started = cid, arrived, needs, None


class Bank:
    def __init__(self, tellers, seed):
        self.free = tellers
        self.queue = []
        self.events = []
        self.random = Random(seed)
        self.waits = []
        self.seq = 0

    def schedule(self, time, kind, customer):
        self.seq += 1
        heapq.heappush(self.events, (time, self.seq, kind, customer))

    def run(self, customers):
        t = 0.0
        for cid in range(customers):
            t += self.random.exponential(1.0)
            self.schedule(t, "arrive", Customer(cid, t, self.random.exponential(2.7)))
        while self.events:
            now, _, kind, customer = heapq.heappop(self.events)
            if kind == "arrive":
                self.queue.append(customer)
            else:
                self.free += 1
            while self.free and self.queue:
                nxt = self.queue.pop(0)
                nxt.started = now
                self.waits.append(now - nxt.arrived)
                self.free -= 1
                self.schedule(now + nxt.needs, "leave", nxt)
        return self.waits


for tellers in (3, 4, 5):
    waits = Bank(tellers, 12345 + tellers).run(40000)
    waits.sort()
    mean = sum(waits) / len(waits)
    print(tellers, round(mean, 6), round(waits[len(waits) // 2], 6), round(waits[-1], 6))
