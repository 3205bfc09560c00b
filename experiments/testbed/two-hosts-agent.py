#!/usr/bin/python3
"""two-hosts-agent.py - the server guest's command channel in two-host mode
(experiments/testbed/run --two-hosts): listens on the management link
(a link between the two guests only) and, per connection, reads one line
holding the base64 of a bash command, runs it from the tree's top with the
server guest's testbed environment (stdin /dev/null), sends its output
(stdout and stderr) and a last line "__tb_rc=STATUS", and closes the
connection. tb_srv (guest-lib.sh) is the client. The answer is sent when
the command's bash exits, even if it left processes running.
Usage: two-hosts-agent.py ADDR PORT"""
import base64, os, socketserver, subprocess, sys, tempfile


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline()
        try:
            cmd = base64.b64decode(line.strip(), validate=True).decode()
        except (ValueError, UnicodeDecodeError):
            self.wfile.write(b"agent: bad request\n__tb_rc=125\n")
            return
        # Output through a file, not a pipe: a process the command leaves
        # running in the background may keep a pipe open forever.
        with tempfile.TemporaryFile() as out:
            rc = subprocess.call(["bash", "-c", cmd], cwd=os.environ.get("TB_TOP", "/"),
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
            out.seek(0)
            self.wfile.write(out.read() + b"__tb_rc=%d\n" % rc)


class Server(socketserver.ForkingTCPServer):
    allow_reuse_address = True


def main():
    addr, port = sys.argv[1], int(sys.argv[2])
    with Server((addr, port), Handler) as srv:
        srv.serve_forever()


if __name__ == "__main__":
    main()
