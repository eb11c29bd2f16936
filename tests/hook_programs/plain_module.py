"""A module without numeric functions: what importing it costs is measured."""

GREETING = "hello"


def greet(name):
    return f"{GREETING}, {name}"


class Registry:
    def __init__(self):
        self.items = {}

    def add(self, key, value):
        self.items[key] = value
