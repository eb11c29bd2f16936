"""Ranges of a projectile with quadratic air drag, by launch angle (explicit Euler)."""

import math
import sys


def flight(speed, angle_deg, drag, dt):
    vx = speed * math.cos(math.radians(angle_deg))
    vy = speed * math.sin(math.radians(angle_deg))
    x = y = 0.0
    t = 0.0
    while y >= 0.0:
        v = math.hypot(vx, vy)
        vx -= drag * v * vx * dt
        vy -= (9.81 + drag * v * vy) * dt
        x += vx * dt
        y += vy * dt
        t += dt
    return x, t


def table(angles, speed, drag):
    best = (0.0, 0.0)
    for a in angles:
        x, t = flight(speed, a, drag, 0.001)
        if x > best[0]:
            best = (x, a)
    return best


scale = int(sys.argv[1]) if len(sys.argv) > 1 else 4
angles = [5 + 80 * k / (10 * scale) for k in range(10 * scale)]
x, a = table(angles, 60.0, 0.002)
print(f"longest range {x:.3f} m at {a:.2f} degrees over {len(angles)} angles")
