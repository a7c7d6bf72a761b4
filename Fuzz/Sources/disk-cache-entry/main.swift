@_spi(Fuzzing) import ImageCache
import FuzzSupport

// Decoding a disk-cache entry file (header, lengths, checksum, key, metadata).
@_cdecl("disk_cache_entry_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        _ = FuzzingEntryPoints.decodeEntryFile(bytes(data, size))
        return 0
    }
}
