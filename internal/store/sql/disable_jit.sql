SET jit = off
