import CFuzzDriver
import Foundation

/// Runs libFuzzer over `body`.
///
/// SwiftPM links a Swift executable with `--defsym main=<Module>_main`, and a target built with
/// `-parse-as-library` (which libFuzzer, having its own `main`, needs) does not define that
/// symbol; so each target exports `<Module>_main` with `@_cdecl` and calls this from it.
public func runFuzzer(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                      _ body: @escaping @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, body)
}

/// The input as `Data` (empty when libFuzzer passes no bytes), without a copy: libFuzzer keeps
/// the bytes for the call, and a 16 MiB input copied would be the largest allocation of a run,
/// hiding the ones `-malloc_limit_mb` is there to catch.
public func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Data {
    guard let data, size > 0 else { return Data() }
    return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: data), count: size, deallocator: .none)
}
