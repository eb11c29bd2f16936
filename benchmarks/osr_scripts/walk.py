"""A lattice random walk driven by an inline 64-bit linear congruential generator
(Knuth's MMIX constants, top bits used), as a flat script: how far a walker strays,
and how often it comes home. One while loop at the top level."""

STEPS = 3_000_000
MASK = (1 << 64) - 1
state = 88172645463325252
x = y = 0
returns = 0
farthest = 0
step = 0
while step < STEPS:
    state = (state * 6364136223846793005 + 1442695040888963407) & MASK
    move = state >> 62
    if move == 0:
        x += 1
    elif move == 1:
        x -= 1
    elif move == 2:
        y += 1
    else:
        y -= 1
    dist = abs(x) + abs(y)
    if dist > farthest:
        farthest = dist
    if dist == 0:
        returns += 1
    step += 1

print("final", x, y, "farthest", farthest, "returns home", returns)
