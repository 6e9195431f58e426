#!/bin/bash
# Create the ONE peer venv the tom_envs benchmarks compare against:
#   ${PEERS_DIR:-$HOME/peers}/venv  with  pettingzoo, open-spiel (binary wheel only), textarena,
#   hanabi-learning-environment (Hanabi's peer and parity reference).
# Follows the install order of shared/peers/setup.sh, minus everything the comparisons do not
# need (no rlcard, no pettingzoo[classic] extras, no torch/SB3, no overcooked, no jaxmarl).
# classic/rps-v2 ships in plain `pettingzoo` but imports pygame at module level, so the one
# package of the `pettingzoo[classic]` extra it needs, pygame-ce, is installed alone.
#
# Idempotent: an existing venv that already imports every peer is left alone.
# Usage: bash benchmarks/setup_peers.sh            (PEERS_DIR=/some/dir to change the place)
set -euo pipefail

PEERS_DIR="${PEERS_DIR:-$HOME/peers}"
PY="${PYTHON:-python3}"
mkdir -p "$PEERS_DIR"
cd "$PEERS_DIR"

if [ -x venv/bin/python ] && venv/bin/python -c "import pettingzoo, pyspiel, textarena, pygame, hanabi_learning_environment.pyhanabi" 2>/dev/null; then
    echo "peer venv already complete: $PEERS_DIR/venv"
    venv/bin/python -c "import pettingzoo, pyspiel; print('pettingzoo', pettingzoo.__version__)"
    exit 0
fi

set -x
[ -x venv/bin/python ] || "$PY" -m venv venv
./venv/bin/pip install -U pip setuptools wheel
./venv/bin/pip install gymnasium
./venv/bin/pip install pettingzoo
./venv/bin/pip install pygame-ce                             # classic/rps-v2 imports pygame
./venv/bin/pip install --only-binary=:all: open-spiel      # manylinux wheel, no compile
./venv/bin/pip install textarena
# Hanabi peer (DeepMind HLE): sdist only; its unpinned build dependency cmake 4.x refuses the
# package's CMakeLists (cmake_minimum_required 2.8) without this policy override.
CMAKE_POLICY_VERSION_MINIMUM=3.5 ./venv/bin/pip install hanabi-learning-environment
./venv/bin/python -c "import pettingzoo, pyspiel, textarena, pygame, hanabi_learning_environment.pyhanabi; print('peers OK, pettingzoo', pettingzoo.__version__)"
./venv/bin/pip freeze > freeze_venv.txt
