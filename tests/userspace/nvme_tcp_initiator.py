#!/usr/bin/env python3
"""A small user-space NVMe/TCP initiator, written for ntprof's tests: plain sockets, no kernel
driver. It connects to a subsystem (ICReq, Fabrics Connect of the admin queue, Property Set CC.EN,
Identify Namespace, Connect of one I/O queue) and runs reads or writes at queue depth 1, stamping
each command through ntprof's Python binding (probe/python/ntprof_probe.py) when one is given, as
a user-space initiator driving, say, GPU memory would.

usage: nvme_tcp_initiator.py --addr IP [--port 4420] --nqn SUBNQN [--nsid 1] [--rw read|write]
           [--bs BYTES] [--count N | --seconds S] [--probe]      prints one JSON summary line
(ntprof_probe.py must be on PYTHONPATH; its library, libntprof_probe.so, is loaded only with --probe)

Writes up to the target's in-capsule size go in the command capsule; larger ones wait for the
target's R2T and follow as H2CData PDUs. Digests are off. Everything the target answers is
checked; an error status ends the run with the status in the message.
"""
import argparse
import json
import os
import socket
import struct
import sys
import time
import uuid

import ntprof_probe as p   # the slot and probe names; the library is loaded only with --probe

# PDU types (NVMe/TCP transport specification)
ICREQ, ICRESP, CAPSULE_CMD, CAPSULE_RESP, H2C_DATA, C2H_DATA, R2T = 0x00, 0x01, 0x04, 0x05, 0x06, 0x07, 0x09
F_DATA_LAST = 0x04
OPC_FABRICS, OPC_WRITE, OPC_READ, OPC_IDENTIFY = 0x7F, 0x01, 0x02, 0x06
FCTYPE_PROPERTY_SET, FCTYPE_CONNECT, FCTYPE_PROPERTY_GET = 0x00, 0x01, 0x04
SGL_IN_CAPSULE = 0x01      # data block descriptor, offset addressing
SGL_TRANSPORT = 0x5A       # transport data block descriptor, NVMe/TCP
PSDT_SGL = 0x40            # CDW0 flags: SGLs, metadata pointer unused


class NvmeError(RuntimeError):
    pass


class NoStamps:
    """Stands in for ntprof_probe.Request without --probe: nothing is ever sampled."""
    sampled = False

    def begin(self, *_):
        return False

    def stamp(self, *_):
        pass

    stamp_first = done = stamp


class Queue:
    """One NVMe/TCP connection = one queue (admin qid 0 or an I/O queue)."""

    def __init__(self, addr, port, qid):
        self.qid = qid
        self.sock = socket.create_connection((addr, port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.cid = 0
        self.maxh2cdata = 0
        self.in_capsule = 0  # bytes of write data a command capsule may carry (IOCCSZ)
        self.last_r2t = 0    # the last command waited for an R2T
        self.last_header_ns = 0

    def recv_exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise NvmeError(f"queue {self.qid}: the target closed the connection")
            buf += chunk
        return bytes(buf)

    def recv_pdu(self):
        """(type, flags, header bytes after the common header, data); last_header_ns: when the
        PDU's first bytes had arrived (the reply "reached the driver")."""
        ch = self.recv_exact(8)
        self.last_header_ns = time.monotonic_ns()
        ptype, flags, hlen, pdo, plen = struct.unpack("<BBBBI", ch)
        rest = self.recv_exact(plen - 8)
        header = rest[:hlen - 8]
        data = rest[pdo - 8:] if pdo else b""
        return ptype, flags, header, data

    def connect_icreq(self):
        body = struct.pack("<HBBI", 0, 0, 0, 0).ljust(120, b"\0")   # PFV 0, HPDA 0, no digests, MAXR2T 0
        self.sock.sendall(struct.pack("<BBBBI", ICREQ, 0, 128, 0, 128) + body)
        ptype, _, header, _ = self.recv_pdu()
        if ptype != ICRESP:
            raise NvmeError(f"queue {self.qid}: expected ICResp, got PDU type {ptype:#x}")
        _pfv, cpda, dgst, self.maxh2cdata = struct.unpack("<HBBI", header[:8])
        if cpda or dgst:
            raise NvmeError(f"queue {self.qid}: the target asks for CPDA {cpda} / digests {dgst}")

    def next_cid(self):
        self.cid = (self.cid + 1) & 0xFFFF
        return self.cid

    def send_capsule(self, sqe, data=b""):
        hlen = 72
        pdo = hlen if data else 0
        self.sock.sendall(struct.pack("<BBBBI", CAPSULE_CMD, 0, hlen, pdo, hlen + len(data)) + sqe + data)

    def response(self, cid, header):
        dw0, _dw1, _sqhd, _sqid, rcid, status = struct.unpack("<IIHHHH", header[:16])
        if rcid != cid:
            raise NvmeError(f"queue {self.qid}: response for cid {rcid}, expected {cid}")
        return dw0, status >> 1

    def admin(self, sqe_fn, data=b"", want=0):
        """Runs one command with no probe; returns (dw0, status, data read)."""
        cid = self.next_cid()
        self.send_capsule(sqe_fn(cid), data)
        got = bytearray()
        while True:
            ptype, _flags, header, pdata = self.recv_pdu()
            if ptype == C2H_DATA:
                got += pdata
            elif ptype == CAPSULE_RESP:
                dw0, status = self.response(cid, header)
                return dw0, status, bytes(got)
            else:
                raise NvmeError(f"queue {self.qid}: unexpected PDU type {ptype:#x}")


def sgl(kind, length):
    return struct.pack("<QI3xB", 0, length, kind)


def fabrics_sqe(cid, fctype, specific):
    head = struct.pack("<BBHB", OPC_FABRICS, PSDT_SGL, cid, fctype).ljust(24, b"\0")
    return (head + sgl(SGL_IN_CAPSULE, 1024 if fctype == FCTYPE_CONNECT else 0) + specific).ljust(64, b"\0")


def connect(q, nqn, hostnqn, hostid, cntlid, sqsize):
    specific = struct.pack("<HHHBBI", 0, q.qid, sqsize - 1, 0, 0, 0)   # RECFMT, QID, SQSIZE, CATTR, KATO 0
    data = (hostid + struct.pack("<H", cntlid)).ljust(256, b"\0")
    data += nqn.encode().ljust(256, b"\0") + hostnqn.encode().ljust(256, b"\0") + b"\0" * 256
    dw0, status, _ = q.admin(lambda cid: fabrics_sqe(cid, FCTYPE_CONNECT, specific), data)
    if status:
        raise NvmeError(f"Connect of queue {q.qid} to {nqn} failed: status {status:#x}")
    return dw0 & 0xFFFF


def property_set(q, offset, value):
    specific = struct.pack("<B3xIQ", 0, offset, value)   # ATTRIB 0 = 4 bytes, OFST, VALUE
    _, status, _ = q.admin(lambda cid: fabrics_sqe(cid, FCTYPE_PROPERTY_SET, specific))
    if status:
        raise NvmeError(f"Property Set {offset:#x} failed: status {status:#x}")


def property_get(q, offset):
    specific = struct.pack("<B3xI", 0, offset)
    dw0, status, _ = q.admin(lambda cid: fabrics_sqe(cid, FCTYPE_PROPERTY_GET, specific))
    if status:
        raise NvmeError(f"Property Get {offset:#x} failed: status {status:#x}")
    return dw0


def identify(q, cns, nsid=0):
    def sqe(cid):
        return (struct.pack("<BBHI", OPC_IDENTIFY, PSDT_SGL, cid, nsid).ljust(24, b"\0")
                + sgl(SGL_TRANSPORT, 4096) + struct.pack("<I", cns)).ljust(64, b"\0")
    _, status, data = q.admin(sqe)
    if status or len(data) != 4096:
        raise NvmeError(f"Identify CNS {cns} failed: status {status:#x}, {len(data)} bytes")
    return data


def io_sqe(cid, opcode, nsid, slba, nlb, length, kind):
    return (struct.pack("<BBHI", opcode, PSDT_SGL, cid, nsid).ljust(24, b"\0") + sgl(kind, length)
            + struct.pack("<QI", slba, nlb)).ljust(64, b"\0")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--addr", required=True)
    ap.add_argument("--port", type=int, default=4420)
    ap.add_argument("--nqn", required=True)
    ap.add_argument("--nsid", type=int, default=1)
    ap.add_argument("--rw", choices=["read", "write"], default="read")
    ap.add_argument("--bs", type=int, default=4096)
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--probe", action="store_true", help="stamp commands through ntprof's binding")
    ap.add_argument("--wait-for-agent", type=float, default=0, metavar="S",
                    help="with --probe: wait up to S seconds for ntprofd to attach before any I/O")
    a = ap.parse_args()
    if not a.count and not a.seconds:
        ap.error("give --count or --seconds")

    req = NoStamps()
    if a.probe:
        probe = p.Probe()
        req = probe.request()
        if a.wait_for_agent and not probe.wait_for_agent(a.wait_for_agent):
            raise NvmeError(f"no ntprofd attached to the probe library in {a.wait_for_agent} s")

    hostid = uuid.uuid4().bytes
    hostnqn = f"nqn.2014-08.org.nvmexpress:uuid:{uuid.UUID(bytes=hostid)}"
    admin = Queue(a.addr, a.port, 0)
    admin.connect_icreq()
    cntlid = connect(admin, a.nqn, hostnqn, hostid, 0xFFFF, 32)
    property_set(admin, 0x14, (4 << 20) | (6 << 16) | 1)   # CC: IOCQES 4, IOSQES 6, EN
    deadline = time.time() + 10
    while not property_get(admin, 0x1C) & 1:                # CSTS.RDY
        if time.time() > deadline:
            raise NvmeError("the controller did not become ready in 10 s")
        time.sleep(0.01)
    ctrl = identify(admin, 1)
    ioccsz = struct.unpack_from("<I", ctrl, 1792)[0]        # command capsule size, 16-byte units
    ns = identify(admin, 0, a.nsid)
    nsze = struct.unpack_from("<Q", ns, 0)[0]
    lbaf = ns[26] & 0xF
    lba_bytes = 1 << ns[128 + 4 * lbaf + 2]
    if a.bs % lba_bytes:
        raise NvmeError(f"--bs {a.bs} is not a multiple of the namespace's {lba_bytes}-byte blocks")

    q = Queue(a.addr, a.port, 1)
    q.connect_icreq()
    connect(q, a.nqn, hostnqn, hostid, cntlid, 32)
    q.in_capsule = max(0, ioccsz * 16 - 64)

    nlb = a.bs // lba_bytes - 1
    blocks = max(1, nsze // (nlb + 1))
    opcode = OPC_READ if a.rw == "read" else OPC_WRITE
    payload = os.urandom(a.bs) if opcode == OPC_WRITE else b""
    end = time.monotonic() + a.seconds if a.seconds else None
    done = sampled = r2t_writes = 0
    started = time.monotonic()
    while (a.count and done < a.count) or (end and time.monotonic() < end):
        slba = (done * 7919 % blocks) * (nlb + 1)
        cid = q.next_cid()
        status, was_sampled = run_io(q, req, a.nqn, cntlid, cid, opcode, a.nsid, slba, nlb, payload,
                                     a.bs)
        if status:
            raise NvmeError(f"{a.rw} of LBA {slba} failed: status {status:#x}")
        done += 1
        sampled += was_sampled
        r2t_writes += q.last_r2t
    elapsed = time.monotonic() - started
    print(json.dumps({"commands": done, "sample_rate": probe.sample_rate() if a.probe else 0, "sampled": sampled, "r2t_writes": r2t_writes, "cntlid": cntlid,
                      "qid": q.qid, "rw": a.rw, "bs": a.bs, "iops": round(done / elapsed, 1),
                      "in_capsule_bytes": q.in_capsule}))


def run_io(q, req, nqn, cntlid, cid, opcode, nsid, slba, nlb, payload, length):
    """One read or write at QD1, stamped at each boundary when sampled (the stamps are no-ops
    otherwise); returns (status, whether it was sampled)."""
    sampled = req.begin(opcode, nsid, slba, nlb & 0xFFFF, cid)
    req.stamp(p.H1_SUBMIT)
    inline = opcode == OPC_WRITE and length <= q.in_capsule
    q.last_r2t = 0
    sqe = io_sqe(cid, opcode, nsid, slba, nlb, length, SGL_IN_CAPSULE if inline else SGL_TRANSPORT)
    # "handed to the socket": stamped before the send, as the kernel driver does; the send's own
    # time is the host's network stack (a stamp after sendall would charge a preempted send to the
    # host driver while the target already works on the command).
    req.stamp(p.H2_CAPSULE_SENT)
    q.send_capsule(sqe, payload if inline else b"")
    received = 0
    while True:
        ptype, _flags, header, data = q.recv_pdu()
        arrived = q.last_header_ns
        if ptype in (C2H_DATA, CAPSULE_RESP):   # an R2T is not a reply
            req.stamp_first(p.H3_REPLY_RECEIVED, arrived)
        if ptype == C2H_DATA:
            ccid, _, datao, datal = struct.unpack("<HHII", header[:12])
            if ccid != cid or datao != received or datal != len(data):
                raise NvmeError(f"C2HData for cid {ccid} at {datao}+{datal}, expected cid {cid} at {received}")
            received += datal
        elif ptype == R2T:
            ccid, ttag, r2to, r2tl = struct.unpack("<HHII", header[:12])
            if ccid != cid:
                raise NvmeError(f"R2T for cid {ccid}, expected {cid}")
            q.last_r2t = 1
            req.stamp_first(p.H_R2T_RECEIVED, arrived)
            send_h2c(q, cid, ttag, payload, r2to, r2tl, lambda: req.stamp(p.H_DATA_SENT))
        elif ptype == CAPSULE_RESP:
            _, status = q.response(cid, header)
            if opcode == OPC_READ and not status and received != length:
                raise NvmeError(f"read of {length} bytes returned {received}")
            req.stamp(p.H_RESPONSE_RECEIVED, arrived)
            req.stamp(p.H4_COMPLETED)
            req.done(p.HOST_TCP, nqn, cntlid, q.qid, cid, opcode, nsid, slba, nlb & 0xFFFF, length,
                     status)
            return status, sampled
        else:
            raise NvmeError(f"unexpected PDU type {ptype:#x} for cid {cid}")


def send_h2c(q, cid, ttag, payload, offset, length, before_last):
    """The data an R2T asked for, in PDUs of at most MAXH2CDATA bytes; before_last() runs as the
    last one is handed to the socket."""
    step = q.maxh2cdata or length
    sent = 0
    while sent < length:
        n = min(step, length - sent)
        last = F_DATA_LAST if sent + n == length else 0
        if last:
            before_last()
        header = struct.pack("<BBBBIHHII4x", H2C_DATA, last, 24, 24, 24 + n, cid, ttag, offset + sent, n)
        q.sock.sendall(header + payload[offset + sent:offset + sent + n])
        sent += n


if __name__ == "__main__":
    try:
        main()
    except (NvmeError, OSError) as e:
        print(f"nvme_tcp_initiator: {e}", file=sys.stderr)
        sys.exit(1)
