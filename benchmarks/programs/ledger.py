"""An account ledger: account classes with inheritance and overdraft rules, transfers
that may fail with exceptions, monthly interest and a reconciliation report. Prints
balances and the failures counted by kind."""


class InsufficientFunds(Exception):
    pass


class Frozen(Exception):
    pass


class Account:
    rate = 0.0

    def __init__(self, number, owner, balance):
        self.number, self.owner, self.balance = number, owner, balance
        self.history = []
        self.frozen = False

    def limit(self):
        return 0

    def withdraw(self, amount):
        if self.frozen:
            raise Frozen(self.number)
        if self.balance - amount < -self.limit():
            raise InsufficientFunds(f"{self.number}: {self.balance} < {amount}")
        self.balance -= amount
        self.history.append(-amount)

    def deposit(self, amount):
        if self.frozen:
            raise Frozen(self.number)
        self.balance += amount
        self.history.append(amount)

    def month_end(self):
        interest = self.balance * self.rate / 12 if self.balance > 0 else 0
        self.balance += round(interest, 2)


class Savings(Account):
    rate = 0.021


class Checking(Account):
    def limit(self):
        return 500


class Business(Checking):
    rate = 0.004

    def limit(self):
        return 5000 + len(self.history)


class Ledger:
    def __init__(self):
        self.accounts = {}
        self.failures = {}

    def open(self, kind, number, owner, balance):
        self.accounts[number] = kind(number, owner, balance)

    def transfer(self, src, dst, amount):
        try:
            self.accounts[src].withdraw(amount)
            self.accounts[dst].deposit(amount)
        except (InsufficientFunds, Frozen) as e:
            name = type(e).__name__
            self.failures[name] = self.failures.get(name, 0) + 1
            if isinstance(e, Frozen) and not self.accounts[src].frozen:
                self.accounts[src].deposit(amount)  # undo the withdrawal


ledger, state = Ledger(), 2024
kinds = (Savings, Checking, Business)
for n in range(300):
    ledger.open(kinds[n % 3], n, f"owner{n % 37}", 1000 + (n * 37) % 5000)
for month in range(12):
    for _ in range(25000):
        state = (state * 1103515245 + 12345) % 2**31
        src, dst, amount = state % 300, (state >> 9) % 300, 1 + (state >> 3) % 900
        if src != dst:
            ledger.transfer(src, dst, amount)
    ledger.accounts[(month * 7) % 300].frozen = month % 2 == 0
    for account in ledger.accounts.values():
        account.month_end()
total = round(sum(a.balance for a in ledger.accounts.values()), 2)
print(total, sorted(ledger.failures.items()))
print([round(ledger.accounts[k].balance, 2) for k in (0, 1, 2, 150, 299)])
