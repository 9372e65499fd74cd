#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write hostile and corrupt disk images for asyncprobe's robustness tests.

    gen-images.py OUTDIR [--seed N] [--fuzz N]

Every image is built from scratch here (MBR, EBR chains, GPT with CRCs,
FAT and ext2 superblocks), so the corruption is exact and needs no tool or
root.  OUTDIR/MANIFEST lists one image per line: "<file> <kind> <what>".
Kinds: label (a filesystem label or partition name made of hostile bytes),
table (a broken partition table), trunc (a truncated image), fuzz (bit
flips of a valid image, seeded).  The same seed always gives the same
images.
"""
import os
import random
import struct
import sys
import zlib

SECTOR = 512


def guid(rng):
    return bytes(rng.getrandbits(8) for _ in range(16))


LINUX_FS = bytes.fromhex("af3dc60f838472478e793d69d8477de4")  # 0FC63DAF-8483-4772-8E79-3D69D8477DE4


class Image:
    def __init__(self, size):
        self.buf = bytearray(size)

    def put(self, off, data):
        end = off + len(data)
        if end > len(self.buf):
            data = data[: max(0, len(self.buf) - off)]
            end = len(self.buf)
        if off < len(self.buf):
            self.buf[off:end] = data

    def save(self, path, truncate=None):
        """Write sparsely: only the 4 KiB blocks that are not all zero."""
        data = self.buf if truncate is None else self.buf[:truncate]
        zero = bytes(4096)
        with open(path, "wb") as f:
            for off in range(0, len(data), 4096):
                chunk = data[off:off + 4096]
                if chunk != zero[:len(chunk)]:
                    f.seek(off)
                    f.write(chunk)
            f.truncate(len(data))


def mbr_entry(boot, ptype, start, count):
    return struct.pack("<B3sB3sII", boot, b"\xfe\xff\xff", ptype, b"\xfe\xff\xff",
                       start & 0xFFFFFFFF, count & 0xFFFFFFFF)


def mbr(entries, disk_id=0x5E2AB0C3):
    b = bytearray(SECTOR)
    struct.pack_into("<I", b, 440, disk_id)
    for i, e in enumerate(entries[:4]):
        b[446 + 16 * i: 462 + 16 * i] = e
    b[510:512] = b"\x55\xaa"
    return bytes(b)


def gpt(img, parts, *, n_entries=128, entry_size=128, entries_lba=2, first=34,
        last=None, hdr_crc_ok=True, ent_crc_ok=True, backup=True, hdr_size=92,
        my_lba=1, rng=None):
    """parts: list of (type, uuid, first_lba, last_lba, name-bytes-utf16le)."""
    total = len(img.buf) // SECTOR
    if last is None:
        last = total - 34
    ents = bytearray()
    for i in range(min(n_entries, 4096)):
        e = bytearray(max(entry_size, 0))
        if i < len(parts) and entry_size >= 56:
            t, u, f, l, name = parts[i]
            hdr = t + u + struct.pack("<QQQ", f, l, 0)
            e[: min(len(e), 56)] = hdr[: min(len(e), 56)]
            if entry_size >= 128:
                e[56: 56 + 72] = name[:72].ljust(72, b"\0")
        ents += e
    ent_crc = zlib.crc32(bytes(ents[: n_entries * entry_size])) & 0xFFFFFFFF
    if not ent_crc_ok:
        ent_crc ^= 0xDEADBEEF

    def header(lba, alt, ent_lba):
        h = bytearray(max(hdr_size, 92))
        struct.pack_into("<8sIII I QQQQ 16s QIII", h, 0, b"EFI PART", 0x00010000,
                         hdr_size, 0, 0, lba, alt, first, last,
                         (rng or random).randbytes(16), ent_lba, n_entries & 0xFFFFFFFF,
                         entry_size & 0xFFFFFFFF, ent_crc)
        crc = zlib.crc32(bytes(h[: min(hdr_size, len(h))])) & 0xFFFFFFFF
        if not hdr_crc_ok:
            crc ^= 0x12345678
        struct.pack_into("<I", h, 16, crc)
        return bytes(h[:SECTOR])

    img.put(0, mbr([mbr_entry(0, 0xEE, 1, min(total - 1, 0xFFFFFFFF))]))
    img.put(my_lba * SECTOR, header(my_lba, total - 1, entries_lba))
    img.put(entries_lba * SECTOR, bytes(ents))
    if backup:
        img.put((total - 33) * SECTOR, bytes(ents))
        img.put((total - 1) * SECTOR, header(total - 1, my_lba, total - 33))


def utf16(s):
    return s.encode("utf-16-le", "surrogatepass")


def fat16_boot(label, size_sectors, serial=0x1234ABCD):
    """A minimal FAT16 boot sector that libblkid recognizes, with a raw label."""
    b = bytearray(SECTOR)
    b[0:3] = b"\xeb\x3c\x90"
    b[3:11] = b"MSWIN4.1"
    struct.pack_into("<HBHBHHBHHHII", b, 11, 512, 4, 4, 2, 512,
                     size_sectors if size_sectors < 65536 else 0, 0xF8, 32, 32, 64, 0,
                     size_sectors if size_sectors >= 65536 else 0)
    struct.pack_into("<BBBI", b, 36, 0x80, 0, 0x29, serial)
    b[43:54] = label[:11].ljust(11, b" ")
    b[54:62] = b"FAT16   "
    b[510:512] = b"\x55\xaa"
    return bytes(b)


def fat16(label, size_sectors):
    """Boot sector plus the first FAT sectors, enough for libblkid."""
    out = bytearray(fat16_boot(label, size_sectors))
    fat = bytearray(SECTOR)
    fat[0:4] = b"\xf8\xff\xff\xff"
    out += bytes(SECTOR * 3)  # reserved
    out += fat
    out += bytes(SECTOR * 63)  # rest of FAT 1, FAT 2 (4 + 2 * 32 sectors)
    # Root directory: a volume-label entry, which is what blkid reports as LABEL.
    ent = bytearray(32)
    ent[0:11] = label[:11].ljust(11, b" ")
    ent[11] = 0x08
    out += ent
    return bytes(out)


def ext2_super(label, uuid):
    """An ext2 superblock (no checksums) at offset 1024 with a raw 16-byte label."""
    s = bytearray(1024)
    struct.pack_into("<IIIIIIIIIIIIIHHH", s, 0, 128, 1024, 0, 900, 100, 1, 0, 0,
                     8192, 8192, 128, 0, 0, 0, 0, 0)
    struct.pack_into("<H", s, 0x38, 0xEF53)       # magic
    struct.pack_into("<H", s, 0x3A, 1)            # clean
    struct.pack_into("<I", s, 0x4C, 1)            # dynamic rev
    struct.pack_into("<H", s, 0x58, 128)          # inode size
    s[0x68:0x78] = uuid
    s[0x78:0x88] = label[:16].ljust(16, b"\0")
    return bytes(s)


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    out = args[0]
    seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 1
    nfuzz = int(args[args.index("--fuzz") + 1]) if "--fuzz" in args else 60
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    manifest = []

    def emit(name, kind, what, img, truncate=None):
        img.save(os.path.join(out, name), truncate)
        manifest.append(f"{name} {kind} {what}")

    mib = 1024 * 1024

    # 1. Labels: every byte value 0x00-0xff in FAT (11 bytes) and ext2 (16
    #    bytes) labels, whole-disk filesystems, 8 values an image.
    for fs in ("fat", "ext2"):
        for start in range(0, 256, 8):
            raw = bytes(range(start, start + 8))
            label = raw + (b"/.." if fs == "fat" else b"/../..\x00\xff")
            img = Image(2 * mib)
            if fs == "fat":
                img.put(0, fat16(label, 4096))
            else:
                img.put(1024, ext2_super(label, guid(rng)))
            emit(f"label-{fs}-{start:02x}.img", "label", f"{fs} label bytes {start:#04x}..{start + 7:#04x}", img)
    # Named hostile labels.
    named = {
        "dotdot-etc": b"../../etc", "dot": b".", "dotdot": b"..", "empty": b"",
        "slash": b"/", "spaces": b"   ", "newline": b"a\nb", "tab": b"a\tb",
        "backslash": b"\\x2f", "percent": b"%s%n%s", "dollar": b"$(reboot)",
        "invalid-utf8": b"\xc3\x28\xa0\xa1\xe2\x28", "overlong": b"\xc0\xaf\xe0\x80\xaf",
        "utf8-ok": "Grüße".encode(), "nul-mid": b"ab\x00cd", "dash": b"-rf",
    }
    for n, label in named.items():
        for fs in ("fat", "ext2"):
            img = Image(2 * mib)
            if fs == "fat":
                img.put(0, fat16(label, 4096))
            else:
                img.put(1024, ext2_super(label, guid(rng)))
            emit(f"label-{fs}-{n}.img", "label", f"{fs} label {n}", img)

    # GPT partition names: every UTF-16 code unit 0x00-0xff, plus long,
    # hostile and surrogate names; 36 units is the field's size.
    def gpt_names(tag, names):
        img = Image(4 * mib)
        parts = []
        for i, nm in enumerate(names):
            parts.append((LINUX_FS, guid(rng), 40 + 8 * i, 40 + 8 * i + 7, nm))
        gpt(img, parts, rng=rng)
        emit(f"gpt-names-{tag}.img", "label", f"GPT partition names {tag}", img)

    for start in range(0, 256, 32):
        names = [utf16("".join(chr(c) for c in range(s, min(s + 8, 256))) + "/x")
                 for s in range(start, start + 32, 8)]
        gpt_names(f"{start:02x}", names)
    gpt_names("hostile", [utf16("../../etc"), utf16(".."), utf16("."), utf16(""),
                          utf16("a" * 36), utf16("\u00e9" * 36), b"\x00\xd8\x41\x00" * 9,
                          utf16("EFI System Partition"), utf16("x/y\\z")])

    # 2. Broken partition tables.
    tables = []

    def table(name, what, build, size=4 * mib, truncate=None):
        img = Image(size)
        build(img)
        emit(name, "table", what, img, truncate)
        tables.append(name)

    table("mbr-overlap.img", "two MBR partitions over the same sectors",
          lambda i: i.put(0, mbr([mbr_entry(0, 0x83, 2048, 4096), mbr_entry(0, 0x83, 2048, 4096),
                                  mbr_entry(0, 0x83, 3000, 1000)])))
    table("mbr-beyond-end.img", "MBR partition past the end of the disk",
          lambda i: i.put(0, mbr([mbr_entry(0, 0x83, 2048, 0xFFFFFF00)])))
    table("mbr-start-beyond.img", "MBR partition starting past the end",
          lambda i: i.put(0, mbr([mbr_entry(0, 0x83, 0xFFFFFFF0, 16)])))
    table("mbr-zero-size.img", "MBR partition of zero sectors",
          lambda i: i.put(0, mbr([mbr_entry(0, 0x83, 2048, 0), mbr_entry(0x80, 0x83, 0, 1)])))
    table("mbr-sector0.img", "MBR partition covering the MBR itself",
          lambda i: i.put(0, mbr([mbr_entry(0, 0x83, 0, 8192)])))
    table("mbr-bad-boot-flag.img", "MBR with invalid boot indicators",
          lambda i: i.put(0, mbr([mbr_entry(0x42, 0x83, 2048, 100), mbr_entry(0x7f, 0x07, 3000, 100)])))
    table("mbr-disk-id-zero.img", "MBR disk id 0 (no PARTUUID)",
          lambda i: i.put(0, mbr([mbr_entry(0, 0x83, 2048, 2048)], disk_id=0)))

    def ext_chain(img, ebrs, first_ext=2048, ext_size=6000):
        img.put(0, mbr([mbr_entry(0, 0x05, first_ext, ext_size)]))
        for lba, entries in ebrs:
            img.put(lba * SECTOR, mbr(entries, disk_id=0))

    table("ebr-self-loop.img", "extended partition whose EBR links to itself",
          lambda i: ext_chain(i, [(2048, [mbr_entry(0, 0x83, 63, 100), mbr_entry(0, 0x05, 0, 200)])]))
    table("ebr-two-loop.img", "two EBRs linking to each other",
          lambda i: ext_chain(i, [(2048, [mbr_entry(0, 0x83, 63, 100), mbr_entry(0, 0x05, 1000, 200)]),
                                  (3048, [mbr_entry(0, 0x83, 63, 100), mbr_entry(0, 0x05, 0, 200)])]))
    table("ebr-backwards.img", "EBR link pointing before the extended partition",
          lambda i: ext_chain(i, [(2048, [mbr_entry(0, 0x83, 63, 100), mbr_entry(0, 0x05, 0xFFFFF000, 200)])]))

    def many_logical(img, n=120):
        ebrs = []
        for k in range(n):
            lba = 2048 + 40 * k
            nxt = [mbr_entry(0, 0x05, 40 * (k + 1), 40)] if k + 1 < n else []
            ebrs.append((lba, [mbr_entry(0, 0x83, 1, 30)] + nxt))
        ext_chain(img, ebrs, ext_size=40 * n + 10)
    table("ebr-120-logical.img", "120 logical partitions in one extended chain", many_logical, size=8 * mib)
    table("mbr-two-extended.img", "two extended partitions in one MBR",
          lambda i: ext_chain(i, [(2048, [mbr_entry(0, 0x83, 63, 100)])]) or
          i.put(0, mbr([mbr_entry(0, 0x05, 2048, 1000), mbr_entry(0, 0x0F, 2048, 1000)])))

    def gpt_case(name, what, size=4 * mib, truncate=None, parts=None, **kw):
        def build(img):
            ps = parts if parts is not None else [(LINUX_FS, guid(rng), 40, 2047, utf16("data"))]
            gpt(img, ps, rng=rng, **kw)
        table(name, what, build, size=size, truncate=truncate)

    gpt_case("gpt-bad-header-crc.img", "GPT primary header CRC wrong, backup good", hdr_crc_ok=False)
    gpt_case("gpt-bad-entries-crc.img", "GPT entries CRC wrong", ent_crc_ok=False)
    gpt_case("gpt-no-backup.img", "GPT without backup header", backup=False)
    gpt_case("gpt-huge-count.img", "GPT claiming 0xffffffff entries", n_entries=0xFFFFFFFF)
    gpt_case("gpt-count-100k.img", "GPT claiming 100000 entries", n_entries=100000)
    gpt_case("gpt-entry-size-0.img", "GPT entry size 0", entry_size=0)
    gpt_case("gpt-entry-size-127.img", "GPT entry size 127", entry_size=127)
    gpt_case("gpt-entry-size-huge.img", "GPT entry size 1 MiB", entry_size=1 << 20, n_entries=4)
    gpt_case("gpt-header-size-huge.img", "GPT header size beyond a sector", hdr_size=4096)
    gpt_case("gpt-header-size-small.img", "GPT header size 16", hdr_size=16)
    gpt_case("gpt-first-after-last.img", "GPT first usable LBA after last usable", first=5000, last=100)
    gpt_case("gpt-entries-at-header.img", "GPT entries LBA = header LBA (self-referencing)", entries_lba=1)
    gpt_case("gpt-entries-at-mbr.img", "GPT entries LBA 0", entries_lba=0)
    gpt_case("gpt-entries-beyond.img", "GPT entries LBA past the end", entries_lba=0xFFFFFFFFFF)
    gpt_case("gpt-my-lba-wrong.img", "GPT header that names another LBA as its own", my_lba=1)
    gpt_case("gpt-overlap.img", "GPT partitions overlapping",
             parts=[(LINUX_FS, guid(rng), 40, 4000, utf16("a")), (LINUX_FS, guid(rng), 100, 200, utf16("b")),
                    (LINUX_FS, guid(rng), 40, 4000, utf16("c"))])
    gpt_case("gpt-reversed.img", "GPT partition whose last LBA is before its first",
             parts=[(LINUX_FS, guid(rng), 4000, 40, utf16("rev"))])
    gpt_case("gpt-beyond-end.img", "GPT partition past the end of the disk",
             parts=[(LINUX_FS, guid(rng), 40, 1 << 40, utf16("far"))])
    gpt_case("gpt-in-header.img", "GPT partition covering its own header and entries",
             parts=[(LINUX_FS, guid(rng), 0, 8000, utf16("meta"))])
    same = guid(rng)
    gpt_case("gpt-dup-uuid.img", "GPT partitions sharing one PARTUUID",
             parts=[(LINUX_FS, same, 40, 1000, utf16("one")), (LINUX_FS, same, 1001, 2000, utf16("two"))])
    gpt_case("gpt-128.img", "GPT with 128 used entries", size=8 * mib,
             parts=[(LINUX_FS, guid(rng), 40 + 64 * k, 40 + 64 * k + 63, utf16(f"p{k}")) for k in range(128)])
    gpt_case("gpt-zero-type.img", "GPT entries with a zero type but a range (unused)",
             parts=[(bytes(16), guid(rng), 40, 1000, utf16("ghost"))])

    # 3. Truncated images: a valid GPT disk, a FAT and an ext2 cut short.
    for cut in (1, 2, 17, 33, 34, 100):
        img = Image(4 * mib)
        gpt(img, [(LINUX_FS, guid(rng), 40, 2047, utf16("cut"))], rng=rng)
        emit(f"trunc-gpt-{cut}.img", "trunc", f"GPT disk truncated to {cut} sectors", img, truncate=cut * SECTOR)
    for cut in (100, 1100, 1500, 2047):
        img = Image(2 * mib)
        img.put(1024, ext2_super(b"cut", guid(rng)))
        emit(f"trunc-ext2-{cut}.img", "trunc", f"ext2 truncated to {cut} bytes", img, truncate=cut)
        img = Image(2 * mib)
        img.put(0, fat16(b"CUT", 4096))
        emit(f"trunc-fat-{cut}.img", "trunc", f"FAT truncated to {cut} bytes", img, truncate=cut)

    # 4. Seeded bit flips in the first 40 sectors of valid tables.
    bases = []
    img = Image(4 * mib)
    gpt(img, [(LINUX_FS, guid(rng), 40 + 100 * k, 139 + 100 * k, utf16(f"f{k}")) for k in range(8)], rng=rng)
    bases.append(("gpt", img.buf))
    img = Image(4 * mib)
    ext_chain(img, [(2048, [mbr_entry(0, 0x83, 63, 100), mbr_entry(0, 0x05, 1000, 200)]),
                    (3048, [mbr_entry(0, 0x83, 63, 100)])])
    bases.append(("mbr", img.buf))
    for k in range(nfuzz):
        kind, base = bases[k % len(bases)]
        img = Image(len(base))
        img.buf[:] = base
        for _ in range(rng.randint(1, 64)):
            pos = rng.randrange(0, 40 * SECTOR) if kind == "gpt" else rng.choice(
                [rng.randrange(440, 512), rng.randrange(2048 * SECTOR + 440, 2048 * SECTOR + 512),
                 rng.randrange(3048 * SECTOR + 440, 3048 * SECTOR + 512)])
            img.buf[pos] ^= 1 << rng.randrange(8)
        emit(f"fuzz-{kind}-{k:03d}.img", "fuzz", f"{kind} with seeded bit flips #{k}", img)

    with open(os.path.join(out, "MANIFEST"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    print(f"{len(manifest)} images in {out} (seed {seed})")


if __name__ == "__main__":
    main()
