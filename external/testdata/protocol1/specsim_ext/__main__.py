"""python3 -m specsim_ext MODULE:FUNCTION serves the specsim protocol."""

import sys

from ._server import load, serve


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print("usage: python3 -m specsim_ext MODULE:FUNCTION\n"
              "Serves the specsim external protocol on stdin/stdout for the function;\n"
              "run it through 'simulate check --external \"python3 -m specsim_ext MODULE:FUNCTION\"'.",
              file=sys.stderr)
        return 2
    f = load(argv[1])
    serve(f, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
