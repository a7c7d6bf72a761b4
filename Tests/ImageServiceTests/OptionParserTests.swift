import ImageCodec
@testable import ImageService
import Testing

@Suite("Service: processing options")
struct OptionParserTests {
    private func parse(_ path: String) throws -> ProcessingOptions {
        try OptionParser.parse(path.split(separator: "/"))
    }

    @Test(
        "long and short names, omitted trailing arguments and separate options are one canonical request",
        arguments: [
            "rs:fill:400:400", "resize:fill:400:400:0", "rs:fill:400:400:false", "s:400:400/rt:fill", "size:400:400:0/resizing_type:fill",
            "rt:fill/w:400/h:400", "width:400/height:400/resizing_type:fill/enlarge:0", "rs:fill:400:400/g:ce", "rs:fill:400:400/dpr:1",
            "rs:fit:10:10/rs:fill:400:400", "rs:fill:400:400/ext:jpg/f:jpeg"
        ])
    func canonicalForms(_ path: String) throws {
        var expected = ProcessingOptions()
        expected.resizingType = .fill
        (expected.width, expected.height) = (400, 400)
        var options = try parse(path)
        if path.hasSuffix("f:jpeg") {
            #expect(options.format == .jpeg)
            options.format = nil
        }
        #expect(options == expected && options.canonical == expected.canonical, "\(path)")
    }

    @Test("options that change the pixels change the canonical form; cachebuster too; expires and format not (format is keyed apart)")
    func canonicalDistinguishes() throws {
        let base = try parse("rs:fill:400:400").canonical
        for variant in [
            "rs:fill:400:401", "rs:fit:400:400", "rs:fill:400:400:1", "rs:fill:400:400/g:no", "rs:fill:400:400/dpr:2",
            "rs:fill:400:400/q:70", "rs:fill:400:400/cb:v2", "rs:fill:400:400/g:fp:0.2:0.3"
        ] {
            #expect(try parse(variant).canonical != base, "\(variant)")
        }
        #expect(try parse("rs:fill:400:400/exp:4102444800").canonical == base)
        #expect(try parse("rs:fill:400:400/f:png").canonical == base)
    }

    @Test("g:sm is the smart gravity, keyed apart from the centre; ex's gravity refuses it")
    func smartGravity() throws {
        let smart = try OptionParser.parse(["rs:fill:100:100", "g:sm"])
        #expect(smart.gravity == .smart)
        let centre = try OptionParser.parse(["rs:fill:100:100"])
        #expect(smart.canonical.contains("g:smart") && smart.canonical != centre.canonical)
        #expect(smart.resize(sourceWidth: 400, sourceHeight: 200)?.gravity == .smart)
    }

    @Test("gravity offsets are read inward from the named edge and keyed; none on sm or fp")
    func gravityOffsets() throws {
        let options = try OptionParser.parse(["rs:fill:100:100", "g:soea:10:0.25", "c:50:50", "ex:1:we:3"])
        #expect(options.gravity == .southEast && options.gravityOffset == GravityOffset(x: 10, y: 0.25))
        // Inward from the bottom-right: left and up.
        #expect(options.crop?.offset == GravityOffset(x: -10, y: -0.25))
        #expect(options.extendGravity == .west && options.extendOffset == GravityOffset(x: 3, y: 0))
        let plain = try OptionParser.parse(["rs:fill:100:100", "g:soea", "c:50:50", "ex:1:we"])
        #expect(options.canonical != plain.canonical)
        #expect(options.resize(sourceWidth: 400, sourceHeight: 200)?.offset == GravityOffset(x: -10, y: -0.25))
        #expect(throws: OptionParser.Failure.self) { try OptionParser.parse(["g:fp:0.5:0.5:1"]) }
    }

    @Test(
        "malformed or unknown options are errors that name the option",
        arguments: [
            ("adjust:1:1:1", "adjust"), ("brightness:10", "brightness"), ("rs:fill:abc", "rs"), ("rs:stretch:1:1", "stretch"), ("q:101", "q"),
            ("g:xx", "xx"), ("dpr:0", "dpr"),
            ("rs:fit:1:1:0:maybe", "rs"), ("ex:1:sm", "sm"), ("pd:70000", "pd"), ("pd", "at least one"), ("bg:zz", "bg"),
            ("bg:1:2", "bg"), ("bg:1:2:300", "bg"), ("exar:1:xx", "xx"), ("fq:jpeg", "fq"), ("rot:45", "rot"), ("bl:101", "bl"), ("sh:inf", "sh"),
            ("pix:70000", "pix"), ("rot:1e9", "rot"), ("ar:2", "ar"),
            ("mb:-1", "mb"), ("mb:2000000000", "mb"),
            ("mb:lots", "mb"), ("fq:tiff:50", "tiff"), ("fq:webp:101", "fq"),
            ("fn:a\u{7}b", "fn"), ("fn:!!!:1", "base64url"), ("att:yes", "att"), ("g:no:5:zz", "offset"), ("g:fp:2:0.5", "fp"), ("w:-3", "w"),
            ("el:maybe", "el"), ("f:tiff", "tiff"), ("c:-1", "c"), ("c:1e9", "c"), ("c:1:1:sm:5", "offsets"),
            ("exp:soon", "exp"), ("w:1:2", "w"), (":", "empty")
        ])
    func malformed(_ path: String, _ named: String) {
        #expect {
            _ = try OptionParser.parse([Substring(path)])
        } throws: { error in
            (error as? OptionParser.Failure)?.message.contains(named) == true
        }
    }

    @Test("extend, padding and background: every spelling of one tile is one canonical request")
    func canvasSpellings() throws {
        let tile = try parse("rs:fit:400:400/ex:1/pd:10/bg:255:255:255")
        #expect(tile.extend && tile.padding == .all(10) && tile.background == .white)
        for variant in [
            "rs:fit:400:400:0:1/pd:10:10:10:10/bg:ffffff", "resize:fit:400:400/extend:true:ce/padding:10:10/background:FFFFFF",
            "s:400:400:0:1/pd:10::10/bg:#ffffff"
        ] {
            #expect(try parse(variant).canonical == tile.canonical, "\(variant)")
        }
        for variant in [
            "rs:fit:400:400/ex:1:no/pd:10/bg:ffffff", "rs:fit:400:400/ex:1/pd:11/bg:ffffff", "rs:fit:400:400/ex:1/pd:10/bg:fffffe",
            "rs:fit:400:400/pd:10/bg:ffffff", "rs:fit:400:400/exar:1/pd:10/bg:ffffff"
        ] {
            #expect(try parse(variant).canonical != tile.canonical, "\(variant)")
        }
        // CSS order: the top stands for every side left out, the right for the left.
        #expect(try parse("pd:1:2").padding == Canvas.Insets(top: 1, right: 2, bottom: 1, left: 2))
        #expect(try parse("pd:1:2:3").padding == Canvas.Insets(top: 1, right: 2, bottom: 3, left: 2))
        #expect(try parse("pd::5").padding == Canvas.Insets(top: 0, right: 5, bottom: 0, left: 5))
        #expect(try parse("bg:1:2:3/bg:").background == nil, "no argument: no background")
        // Padding follows dpr; the extension is the box after dpr.
        let doubled = try parse("rs:fit:100:50/ex:1/pd:3:4/dpr:2").canvas
        #expect(doubled.padding == Canvas.Insets(top: 6, right: 8, bottom: 6, left: 8) && doubled.extend == .size(width: 200, height: 100))
    }

    @Test("rotation: any multiple of 90 normalised; the box is the rotated image's, the gravity turned back")
    func rotation() throws {
        #expect(try parse("rot:-90").rotation == 270 && (try parse("rot:450").rotation) == 90)
        #expect(try parse("w:10/rot:360").canonical == (try parse("w:10").canonical))
        #expect(try parse("w:10/rot:90").canonical != (try parse("w:10").canonical))
        #expect(try parse("w:10/ar:0").canonical != (try parse("w:10").canonical))
        // A 480×300 landscape turned a quarter is 300×480: fill 100×50 of it, keeping its top,
        // is fill 50×100 of the source keeping its left edge.
        let resize = try #require(try parse("rs:fill:100:50/g:no/rot:90").resize(sourceWidth: 480, sourceHeight: 300))
        #expect(resize == Resize(mode: .fill, width: 50, height: 100, gravity: .west))
        #expect(Gravity.north.unrotated(by: 270) == .east && Gravity.northEast.unrotated(by: 180) == .southWest)
        #expect(Gravity.focus(x: 0.2, y: 0.1).unrotated(by: 90) == .focus(x: 0.1, y: 0.8))
    }

    @Test("format_quality keys per format; filename and attachment change no key")
    func formatQualityAndFilename() throws {
        let options = try parse("fq:webp:60:jpeg:70/fn:cHJvZHVjdC3wn5GX:1/att:1")
        #expect(options.formatQuality == [.webp: 60, .jpeg: 70] && options.returnsAttachment)
        #expect(options.filename == "product-👗")
        #expect(try parse("fq:jpeg:70:webp:60").canonical == options.canonical, "order does not matter")
        #expect(try parse("fq:jpeg:70").canonical != options.canonical)
        #expect(try parse("w:0").canonical != options.canonical)
        #expect(try parse("fq:webp:60:jpeg:70/fn:other").canonical == options.canonical, "a header, not the bytes")
        #expect(try parse("fq:jpeg:0").formatQuality.isEmpty, "0: the default")
        #expect(try parse("bl:2/sh:0.5/pix:8").canonical == (try parse("blur:2/sharpen:0.5/pixelate:8").canonical))
        #expect(try parse("bl:0/pix:1").canonical == (try parse("").canonical), "no blur, no pixelation")
        #expect(try parse("mb:0").maxBytes == nil && (try parse("max_bytes:30000").maxBytes) == 30_000)
        #expect(try parse("w:10/mb:30000").canonical != (try parse("w:10").canonical))
        #expect(try parse("w:10/mb:30000").canonical == (try parse("w:10/max_bytes:30000").canonical))
    }

    @Test("a box side is 0-65535 at parse time, and the box never traps on what the API can set")
    func sideBounds() throws {
        #expect(try parse("w:65535/h:0").width == ProcessingOptions.maxSide)
        for path in ["w:65536", "h:9223372036854775807", "rs:fit:1:-1", "s:18446744073709551616"] {
            #expect(throws: OptionParser.Failure.self, "\(path)") { try parse(path) }
        }
        var options = ProcessingOptions()
        (options.width, options.height, options.dpr) = (.max, .min, 8)
        #expect(options.box == (Int(Int32.max), 0))
        options.dpr = .nan
        #expect(options.box == (Int(Int32.max), Int(Int32.max)))
        #expect(options.resize(sourceWidth: 10, sourceHeight: 10) != nil)
    }

    @Test("auto is fill when source and box have the same orientation (a square matches either), else fit")
    func auto() throws {
        let options = try parse("rs:auto:400:300")
        #expect(options.resize(sourceWidth: 4000, sourceHeight: 3000)?.mode == .fill)
        #expect(options.resize(sourceWidth: 3000, sourceHeight: 4000)?.mode == .fit)
        #expect(options.resize(sourceWidth: 3000, sourceHeight: 3000)?.mode == .fill)
        #expect(try parse("rs:auto:300:300").resize(sourceWidth: 3000, sourceHeight: 4000)?.mode == .fill)
    }

    @Test("a zero side is fitted by the other, both zero is no resize, dpr multiplies the box")
    func sides() throws {
        #expect(try parse("rs:fill:300:0").resize(sourceWidth: 1000, sourceHeight: 500) == .fit(width: 300, height: 0))
        #expect(try parse("w:0/h:0").resize(sourceWidth: 1000, sourceHeight: 500) == nil)
        #expect(try parse("rs:force:100:50/dpr:2").resize(sourceWidth: 1000, sourceHeight: 500) == .force(width: 200, height: 100))
        #expect(
            try parse("rs:fill-down:100:100/g:sowe").resize(sourceWidth: 10, sourceHeight: 10)
                == .fillDown(width: 100, height: 100, gravity: .southWest))
        // fill-down never enlarges: `:1` is the same request (one resize, one cache key), a zero side too.
        #expect(try parse("rs:fill-down:100:100:1").resize(sourceWidth: 10, sourceHeight: 10) == .fillDown(width: 100, height: 100))
        #expect(try parse("rs:fill-down:100:100:1").canonical == (try parse("rs:fill-down:100:100:0").canonical))
        #expect(try parse("rs:fill-down:100:0:1").resize(sourceWidth: 10, sourceHeight: 10) == .fit(width: 100, height: 0))
        #expect(
            try parse("rs:fill:100:100:1/g:fp:0.25:0.75").resize(sourceWidth: 10, sourceHeight: 10)
                == .fill(width: 100, height: 100, gravity: .focusPoint(x: 0.25, y: 0.75)!, enlarge: true))
    }

    @Test("paths: plain with @extension, base64 split by / with .extension, options stop at the source")
    func paths() throws {
        let plain = try ProcessingPath("/sig/w:100/plain/https://a.example/x%20y.jpg%3Fv%3D1@png").contents()
        #expect(plain.options == ["w:100"] && plain.source == "https://a.example/x y.jpg?v=1" && plain.extension == "png")
        let encoded = try ProcessingPath("/sig/rs:fit:1:1/aHR0cHM6Ly9hLmV4/YW1wbGUveC5qcGc.jpg").contents()
        #expect(encoded.source == "https://a.example/x.jpg" && encoded.extension == "jpg")
        let noOptions = try ProcessingPath("/sig/aHR0cHM6Ly9hLmV4YW1wbGUveC5qcGc").contents()
        #expect(noOptions.options.isEmpty && noOptions.source == "https://a.example/x.jpg")
        #expect(throws: ProcessingPath.Failure.self) { try ProcessingPath("/sig/w:100").contents() }
        #expect(throws: ProcessingPath.Failure.self) { try ProcessingPath("/sig/w:100/not*base64").contents() }
        #expect(throws: ProcessingPath.Failure.self) { try ProcessingPath("/onlysignature") }
    }
}
