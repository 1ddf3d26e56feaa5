"""How many colours a PNG screenshot has, decoded with zlib alone.

    png_colours.py FILE.png

Prints "WIDTHxHEIGHT, N colours, P% not the background" (the background is
the colour of the top-left pixel); exits 1 when the file is not an 8-bit
RGB or RGBA PNG. A blank screenshot has one colour.
"""
import struct
import sys
import zlib


def rows(data, width, channels, height):
    stride = width * channels
    prev = bytearray(stride)
    pos = 0
    for _ in range(height):
        kind = data[pos]
        line = bytearray(data[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        yield line
        prev = line


def main():
    blob = open(sys.argv[1], "rb").read()
    if blob[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s: not a PNG file" % sys.argv[1])
    pos, idat, header = 8, [], None
    while pos < len(blob):
        length, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        body = blob[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace:
        sys.exit("%s: not an 8-bit RGB or RGBA PNG" % sys.argv[1])
    channels = 3 if colour_type == 2 else 4
    data = zlib.decompress(b"".join(idat))
    colours, other, background = set(), 0, None
    for line in rows(data, width, channels, height):
        pixels = [bytes(line[i:i + 3]) for i in range(0, len(line), channels)]
        if background is None:
            background = pixels[0]
        colours.update(pixels)
        other += sum(1 for p in pixels if p != background)
    print("%dx%d, %d colours, %.1f%% not the background"
          % (width, height, len(colours), 100.0 * other / (width * height)))


main()
