pub struct Prosterno;
