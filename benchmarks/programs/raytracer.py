"""A small ray tracer: vector objects, spheres, diffuse and specular shading, shadows.
Prints a checksum of the rendered image and a coarse ASCII preview."""
import math


class Vec:
    __slots__ = ("x", "y", "z")

    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z

    def __add__(self, o):
        return Vec(self.x + o.x, self.y + o.y, self.z + o.z)

    def __sub__(self, o):
        return Vec(self.x - o.x, self.y - o.y, self.z - o.z)

    def scale(self, k):
        return Vec(self.x * k, self.y * k, self.z * k)

    def dot(self, o):
        return self.x * o.x + self.y * o.y + self.z * o.z

    def norm(self):
        return self.scale(1.0 / math.sqrt(self.dot(self)))


class Sphere:
    def __init__(self, center, radius, color, shine):
        self.center, self.radius, self.color, self.shine = center, radius, color, shine

    def hit(self, origin, direction):
        oc = origin - self.center
        b = oc.dot(direction)
        c = oc.dot(oc) - self.radius * self.radius
        disc = b * b - c
        if disc < 0:
            return None
        root = math.sqrt(disc)
        t = -b - root
        if t < 1e-4:
            t = -b + root
        return t if t >= 1e-4 else None


class Scene:
    def __init__(self):
        self.objects = [
            Sphere(Vec(0, -1000, 0), 999.0, Vec(0.6, 0.6, 0.6), 0.0),
            Sphere(Vec(0, 0, 4), 1.0, Vec(0.9, 0.2, 0.2), 40.0),
            Sphere(Vec(-2, 0.3, 5), 1.3, Vec(0.2, 0.8, 0.3), 10.0),
            Sphere(Vec(2, -0.2, 3.5), 0.8, Vec(0.3, 0.3, 0.9), 80.0),
        ]
        self.light = Vec(-3, 5, -2)

    def nearest(self, origin, direction):
        best, best_t = None, math.inf
        for obj in self.objects:
            t = obj.hit(origin, direction)
            if t is not None and t < best_t:
                best, best_t = obj, t
        return best, best_t

    def shade(self, origin, direction):
        obj, t = self.nearest(origin, direction)
        if obj is None:
            return Vec(0.1, 0.1, 0.15)
        point = origin + direction.scale(t)
        normal = (point - obj.center).norm()
        to_light = (self.light - point).norm()
        shadow, _ = self.nearest(point, to_light)
        diffuse = 0.0 if shadow is not None else max(0.0, normal.dot(to_light))
        spec = 0.0
        if obj.shine and shadow is None:
            reflect = normal.scale(2 * normal.dot(to_light)) - to_light
            spec = max(0.0, reflect.dot(direction.scale(-1.0))) ** obj.shine
        return obj.color.scale(0.1 + 0.9 * diffuse) + Vec(spec, spec, spec)


def render(width, height):
    scene = Scene()
    eye = Vec(0, 0, -1)
    rows = []
    for j in range(height):
        row = []
        for i in range(width):
            d = Vec((i - width / 2) / height, (height / 2 - j) / height, 1.0).norm()
            row.append(scene.shade(eye, d))
        rows.append(row)
    return rows


image = render(320, 200)
checksum = sum(round(p.x * 255) + 3 * round(p.y * 255) + 7 * round(p.z * 255) for row in image for p in row)
print("checksum", checksum)
for row in image[::40]:
    print("".join(" .:-=+*#%@"[min(9, int((p.x + p.y + p.z) * 3))] for p in row[::16]))
