@_spi(Fuzzing) import ImageCodec
import FuzzSupport

// The EXIF parser, both as a TIFF block (PNG eXIf) and as a JPEG APP1 payload, and the edits
// made to a block an output keeps (the copyright alone, the orientation upright).
@_cdecl("exif_orientation_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        let input = [UInt8](bytes(data, size))
        if let value = FuzzingEntryPoints.exifOrientation(tiff: input), !(1...8).contains(value) { fatalError("orientation \(value)") }
        if let value = FuzzingEntryPoints.exifOrientation(app1: input), !(1...8).contains(value) { fatalError("orientation \(value)") }
        FuzzingEntryPoints.checkEXIFEdits(tiff: input)
        return 0
    }
}
