"""Formatting: lists, strings and dicts, which stay interpreted."""


def shade_rows(rows):
    palette = " .:-=+*#%@"
    return ["".join(palette[min(9, v // 50)] for v in row) for row in rows]


def summary(results):
    width = max(len(k) for k in results)
    return "\n".join(f"{k.ljust(width)} : {v!r}" for k, v in results.items())
