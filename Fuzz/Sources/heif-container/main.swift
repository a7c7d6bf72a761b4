import FuzzSupport
@_spi(Fuzzing) import ImageCodec

// The HEIC and AVIF container walker alone (HEIFContainer: boxes, item tables, the reference
// graph, grid and overlay descriptors, HEVC and AV1 parameter sets), without libheif: any bytes,
// a typed error or a walk whose counts are within its limits, never a crash, leak or hang.
@_cdecl("heif_container_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        FuzzingEntryPoints.checkedHEIFContainer(bytes(data, size))
        return 0
    }
}
