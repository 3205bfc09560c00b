#!/usr/bin/python3
"""qmp.py SOCKET COMMAND [ARGUMENTS-JSON] - run one QMP command on a QEMU
monitor socket (the two-host testbed's link cuts: set_link) and print its
answer; exit status 1 when QEMU answers an error or cannot be reached."""
import json, socket, sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    try:
        sock.connect(sys.argv[1])
    except OSError as e:
        print("qmp: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 1
    f = sock.makefile("rw")

    def answer():
        while True:
            line = f.readline()
            if not line:
                raise EOFError("QEMU closed the monitor")
            msg = json.loads(line)
            if "return" in msg or "error" in msg:
                return msg

    json.loads(f.readline())  # the greeting
    f.write(json.dumps({"execute": "qmp_capabilities"}) + "\n")
    f.flush()
    answer()
    cmd = {"execute": sys.argv[2]}
    if len(sys.argv) > 3:
        cmd["arguments"] = json.loads(sys.argv[3])
    f.write(json.dumps(cmd) + "\n")
    f.flush()
    msg = answer()
    if "error" in msg:
        print("qmp: %s: %s" % (sys.argv[2], msg["error"].get("desc")), file=sys.stderr)
        return 1
    print(json.dumps(msg["return"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
