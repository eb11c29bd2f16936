"""A text tokenizer: a hand-written scanner (identifiers, numbers, strings, operators,
comments) over generated source text, then token statistics with dicts. Prints the
counts by kind and the most frequent identifiers."""

KEYWORDS = {"if", "else", "while", "for", "return", "def", "class", "in", "and", "or", "not"}
OPERATORS = set("+-*/%=<>!&|^~()[]{},.:;")


class Token:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line


def scan(source):
    tokens, i, line, n = [], 0, 1, len(source)
    while i < n:
        ch = source[i]
        if ch == "\n":
            line += 1
            i += 1
        elif ch.isspace():
            i += 1
        elif ch == "#":
            while i < n and source[i] != "\n":
                i += 1
        elif ch.isalpha() or ch == "_":
            start = i
            while i < n and (source[i].isalnum() or source[i] == "_"):
                i += 1
            word = source[start:i]
            tokens.append(Token("keyword" if word in KEYWORDS else "name", word, line))
        elif ch.isdigit():
            start = i
            while i < n and (source[i].isdigit() or source[i] == "."):
                i += 1
            tokens.append(Token("number", source[start:i], line))
        elif ch in "\"'":
            start, i = i, i + 1
            while i < n and source[i] != ch:
                i += 2 if source[i] == "\\" else 1
            i += 1
            tokens.append(Token("string", source[start:i], line))
        elif ch in OPERATORS:
            two = source[i:i + 2]
            if two in ("==", "!=", "<=", ">=", "**", "//", "->"):
                tokens.append(Token("op", two, line))
                i += 2
            else:
                tokens.append(Token("op", ch, line))
                i += 1
        else:
            raise ValueError(f"unexpected {ch!r} on line {line}")
    return tokens


def generate(lines, seed):
    names = ["alpha", "beta", "gamma", "delta", "total", "count", "item", "value", "node", "index"]
    out, state = [], seed
    for k in range(lines):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        a, b, c = names[state % 10], names[(state >> 8) % 10], names[(state >> 16) % 10]
        form = (state >> 24) % 5
        if form == 0:
            out.append(f"{a} = {b} * {(state >> 32) % 1000} + {c}  # step {k}")
        elif form == 1:
            out.append(f"if {a} >= {b} and not {c}: return '{a}-{k}'")
        elif form == 2:
            out.append(f"for {a} in range({(state >> 40) % 50}): {b} += {a} ** 2")
        elif form == 3:
            out.append(f'{c}["{a}"] = ({b}, {(state >> 20) % 77}.5, "x\\"y")')
        else:
            out.append(f"def {a}_{k}({b}, {c}): return {b} // {c} != {k}")
    return "\n".join(out)


kinds, names = {}, {}
for seed in range(12):
    for token in scan(generate(3000, seed)):
        kinds[token.kind] = kinds.get(token.kind, 0) + 1
        if token.kind == "name":
            names[token.text] = names.get(token.text, 0) + 1
print(sorted(kinds.items()))
print(sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))[:5])
