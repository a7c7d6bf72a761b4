/// `transform` applied to every element at once (the runtime's pool bounds the parallelism),
/// each outcome in input order.
func concurrentResults<Element: Sendable, Output: Sendable, Failure: Error>(
    _ elements: [Element], _ transform: @escaping @Sendable (Element) throws(Failure) -> Output
) async -> [Result<Output, Failure>] {
    let results = await withTaskGroup(of: (Int, Result<Output, Failure>).self) { group in
        for (index, element) in elements.enumerated() {
            group.addTask { (index, Result { () throws(Failure) in try transform(element) }) }
        }
        var results = [Result<Output, Failure>?](repeating: nil, count: elements.count)
        for await (index, result) in group { results[index] = result }
        return results
    }
    // Every index was filled: each task returns exactly one result.
    return results.compactMap { $0 }
}

/// `transform` applied to every element at once, results in input order. If any fail, the
/// error of the earliest failing element is thrown, so the outcome does not depend on scheduling.
func concurrentMap<Element: Sendable, Output: Sendable, Failure: Error>(
    _ elements: [Element], _ transform: @escaping @Sendable (Element) throws(Failure) -> Output
) async throws(Failure) -> [Output] {
    var outputs: [Output] = []
    outputs.reserveCapacity(elements.count)
    for result in await concurrentResults(elements, transform) { outputs.append(try result.get()) }
    return outputs
}
