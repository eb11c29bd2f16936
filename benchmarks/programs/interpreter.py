"""A tiny stack-machine interpreter: an assembler for a small instruction set, then
programs (loops, calls, arithmetic) run by a dispatch loop over instruction objects.
Prints each program's result and the instructions executed."""


class Instr:
    __slots__ = ("op", "arg")

    def __init__(self, op, arg=None):
        self.op, self.arg = op, arg


def assemble(text):
    code, labels, fixups = [], {}, []
    for line in text.strip().splitlines():
        parts = line.split()
        if parts[0].endswith(":"):
            labels[parts[0][:-1]] = len(code)
            continue
        arg = parts[1] if len(parts) > 1 else None
        if arg is not None and arg.lstrip("-").isdigit():
            arg = int(arg)
        elif arg is not None:
            fixups.append(len(code))
        code.append(Instr(parts[0], arg))
    for at in fixups:
        code[at].arg = labels[code[at].arg]
    return code


class Machine:
    def __init__(self, code):
        self.code, self.stack, self.frames, self.steps = code, [], [], 0
        self.vars = [0] * 8

    def run(self):
        pc, code, stack = 0, self.code, self.stack
        while True:
            ins = code[pc]
            pc += 1
            self.steps += 1
            op = ins.op
            if op == "push":
                stack.append(ins.arg)
            elif op == "load":
                stack.append(self.vars[ins.arg])
            elif op == "store":
                self.vars[ins.arg] = stack.pop()
            elif op == "add":
                b = stack.pop()
                stack.append(stack.pop() + b)
            elif op == "sub":
                b = stack.pop()
                stack.append(stack.pop() - b)
            elif op == "mul":
                b = stack.pop()
                stack.append(stack.pop() * b)
            elif op == "mod":
                b = stack.pop()
                stack.append(stack.pop() % b)
            elif op == "jz":
                if stack.pop() == 0:
                    pc = ins.arg
            elif op == "jmp":
                pc = ins.arg
            elif op == "call":
                self.frames.append(pc)
                pc = ins.arg
            elif op == "ret":
                pc = self.frames.pop()
            elif op == "halt":
                return stack.pop()
            else:
                raise ValueError(op)


SUM_OF_SQUARES = """
push 0
store 0
push 0
store 1
loop:
load 1
push 150000
sub
jz done
load 1
load 1
mul
load 0
add
push 1000003
mod
store 0
load 1
push 1
add
store 1
jmp loop
done:
load 0
halt
"""

COLLATZ = """
push 27
store 0
push 0
store 1
again:
load 0
push 1
sub
jz finish
load 1
push 1
add
store 1
load 0
push 2
mod
jz even
load 0
push 3
mul
push 1
add
store 0
jmp again
even:
call half
jmp again
half:
push 0
store 2
count:
load 2
push 2
mul
load 0
sub
jz halved
load 2
push 1
add
store 2
jmp count
halved:
load 2
store 0
ret
finish:
load 1
halt
"""

for source in (SUM_OF_SQUARES, COLLATZ):
    m = Machine(assemble(source))
    print(m.run(), m.steps)
