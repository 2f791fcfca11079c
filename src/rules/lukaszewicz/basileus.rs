pub struct Basileus;
