"""A cooperative task scheduler: tasks with priorities and budgets, a round-robin run
queue per priority, blocking on resources and waking up. Prints the completion order
digest and per-priority statistics."""


class Task:
    def __init__(self, tid, priority, work, resource):
        self.tid, self.priority, self.work, self.resource = tid, priority, work, resource
        self.done_at = None
        self.slices = 0

    def step(self, quantum):
        used = min(quantum, self.work)
        self.work -= used
        self.slices += 1
        return used


class Scheduler:
    def __init__(self, levels):
        self.queues = [[] for _ in range(levels)]
        self.blocked = {}
        self.owner = {}
        self.clock = 0
        self.finished = []

    def add(self, task):
        self.queues[task.priority].append(task)

    def pick(self):
        for queue in self.queues:
            if queue:
                return queue.pop(0)
        return None

    def run(self, quantum):
        while True:
            task = self.pick()
            if task is None:
                if not self.blocked:
                    return
                res = next(iter(self.blocked))
                self.release(res)
                continue
            owner = self.owner.get(task.resource)
            if owner is not None and owner is not task:
                self.blocked.setdefault(task.resource, []).append(task)
                continue
            self.owner[task.resource] = task
            self.clock += task.step(quantum)
            if task.work == 0:
                task.done_at = self.clock
                self.finished.append(task)
                self.release(task.resource)
            else:
                if task.slices % 3 == 0:
                    self.release(task.resource)
                self.queues[min(len(self.queues) - 1, task.priority + (task.slices % 2))].append(task)

    def release(self, resource):
        self.owner.pop(resource, None)
        for task in self.blocked.pop(resource, []):
            self.queues[task.priority].append(task)


def simulate(n, seed):
    state = seed
    sched = Scheduler(4)
    for tid in range(n):
        state = (state * 1103515245 + 12345) % 2**31
        sched.add(Task(tid, state % 4, 5 + state % 97, "r%d" % (state % 13)))
    sched.run(quantum=7)
    return sched


total = 0
for seed in range(2):
    s = simulate(4000, seed)
    digest = 0
    for k, task in enumerate(s.finished):
        digest = (digest * 31 + task.tid * (k + 1)) % 1000000007
    by_level = [sum(t.done_at for t in s.finished if t.priority == p) // max(1, sum(1 for t in s.finished if t.priority == p)) for p in range(4)]
    print(seed, s.clock, digest, by_level)
    total += digest
print("total", total)
