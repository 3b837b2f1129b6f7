//! The protobuf codec of the binding: prost's encoding, with a message that does not decode
//! answered as the client's fault (INVALID_ARGUMENT with an A2A `ErrorInfo`, reason
//! `PARSE_ERROR`, like invalid JSON on the other bindings) rather than tonic's INTERNAL.

use crate::binding::grpc::status::status_of;
use ferry_proto::{A2aError, ErrorKind, ErrorTable};
use std::marker::PhantomData;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// Encodes `E`, decodes `D`.
#[derive(Debug)]
pub(crate) struct A2aCodec<E, D> {
    table: ErrorTable,
    types: PhantomData<fn(E) -> D>,
}

impl<E, D> A2aCodec<E, D> {
    /// A codec whose refusals use `table`.
    pub(crate) fn new(table: ErrorTable) -> Self {
        Self {
            table,
            types: PhantomData,
        }
    }
}

impl<E, D> Codec for A2aCodec<E, D>
where
    E: prost::Message + Send + 'static,
    D: prost::Message + prost::Name + Default + Send + 'static,
{
    type Encode = E;
    type Decode = D;
    type Encoder = MessageEncoder<E>;
    type Decoder = MessageDecoder<D>;

    fn encoder(&mut self) -> Self::Encoder {
        MessageEncoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        MessageDecoder {
            table: self.table,
            types: PhantomData,
        }
    }
}

/// Writes a message.
#[derive(Debug)]
pub(crate) struct MessageEncoder<E>(PhantomData<fn(E)>);

impl<E: prost::Message> Encoder for MessageEncoder<E> {
    type Item = E;
    type Error = Status;

    fn encode(&mut self, item: E, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // An EncodeBuf grows as needed: encoding cannot run out of room.
        item.encode(dst)
            .map_err(|e| Status::internal(format!("encoding the answer failed: {e}")))
    }
}

/// Reads a message.
#[derive(Debug)]
pub(crate) struct MessageDecoder<D> {
    table: ErrorTable,
    types: PhantomData<fn() -> D>,
}

impl<D: prost::Message + prost::Name + Default> Decoder for MessageDecoder<D> {
    type Item = D;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<D>, Status> {
        D::decode(src).map(Some).map_err(|e| {
            let error = A2aError::new(
                ErrorKind::ParseError,
                format!("the request is not a valid {} message: {e}", D::NAME),
            );
            status_of(&error, self.table)
        })
    }
}
