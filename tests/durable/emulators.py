"""`emulators.py N`: N emulators in this process (panto.emulator.Emulator), one URL a line on
stdout, served until stdin closes or the process is killed: the Go durable tests' 100
concurrent turns, each with a scenario of its own (a scenario's answers go in order)."""

import sys

from panto.emulator import Emulator

emulators = [Emulator() for _ in range(int(sys.argv[1]))]
for emu in emulators:
    print(emu.url)
sys.stdout.flush()
sys.stdin.read()
for emu in emulators:
    emu.close()
