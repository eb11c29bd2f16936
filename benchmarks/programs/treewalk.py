"""A tree walk over dicts and lists: a generated JSON-like document of departments,
teams and people, walked recursively to aggregate, filter, and re-shape it. Prints the
aggregates."""


def make(seed, depth):
    state = [seed]

    def rnd(n):
        state[0] = (state[0] * 48271) % 2147483647
        return state[0] % n

    def node(level):
        if level == depth:
            return {"name": f"p{rnd(100000)}", "salary": 30000 + rnd(90000), "skills": [f"s{rnd(30)}" for _ in range(1 + rnd(4))]}
        return {"name": f"unit{level}-{rnd(1000)}", "budget": rnd(10**6), "children": [node(level + 1) for _ in range(2 + rnd(4))]}

    return node(0)


def walk(tree, path, out):
    if "children" in tree:
        for child in tree["children"]:
            walk(child, path + [tree["name"]], out)
    else:
        out.append((tuple(path), tree))


def summarize(tree):
    people = []
    walk(tree, [], people)
    by_skill = {}
    by_top = {}
    for path, person in people:
        for skill in person["skills"]:
            entry = by_skill.setdefault(skill, [0, 0])
            entry[0] += 1
            entry[1] += person["salary"]
        key = path[1] if len(path) > 1 else path[0]
        by_top[key] = by_top.get(key, 0) + person["salary"]
    top_skills = sorted(by_skill.items(), key=lambda kv: (-kv[1][0], kv[0]))[:3]
    return len(people), top_skills, max(by_top.values())


def depth_of(tree):
    return 1 + max((depth_of(c) for c in tree.get("children", [])), default=0)


for seed in (1, 2, 3, 4):
    doc = make(seed, 7)
    print(seed, depth_of(doc), summarize(doc))
