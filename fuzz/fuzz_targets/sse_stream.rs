//! The client's SSE parser: the same bytes give the same events however they are chunked
//! (the first input byte picks the chunk size), and every event's data goes through the
//! decoders the client applies to it.

#![no_main]

use ferry_client::sse::SseParser;
use ferry_proto::{JsonRpcResponse, StreamResponse};
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 64 * 1024;

fuzz_target!(|input: &[u8]| {
    let Some((&chunk, bytes)) = input.split_first() else {
        return;
    };
    let whole = SseParser::new(LIMIT).feed(bytes);
    let mut parser = SseParser::new(LIMIT);
    let mut chunked = Ok(Vec::new());
    for piece in bytes.chunks(usize::from(chunk).max(1)) {
        match parser.feed(piece) {
            Ok(events) => {
                if let Ok(all) = &mut chunked {
                    all.extend(events);
                }
            }
            Err(e) => {
                chunked = Err(e);
                break;
            }
        }
    }
    match (&whole, &chunked) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "chunking changed the events"),
        // The size limit counts bytes of one event, so both readings refuse it.
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("one reading refused, the other did not: {whole:?} / {chunked:?}"),
    }
    for event in whole.iter().flatten() {
        let _ = serde_json::from_str::<StreamResponse>(&event.data);
        if let Ok(envelope) = serde_json::from_str::<JsonRpcResponse>(&event.data)
            && let Some(result) = envelope.result
        {
            let _ = serde_json::from_value::<StreamResponse>(result);
        }
    }
});
